"""Running text around the model: sentences (sentences.py), items carried verbatim or in the target's
convention (items.py, numbers.py) through slots the model copies (slots.py), each line's segments
(segments.py), and the whole (pipeline.py: ``translate_lines``), set by one TextSettings (settings.py)."""
