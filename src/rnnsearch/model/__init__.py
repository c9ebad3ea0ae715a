"""The model: additive attention, the encoders, the decoder with its maxout deep output, the fused
output layer and loss, deferred weight gradients, and RNNsearch / RNNencdec with the paper's
initialisation (seq2seq.py)."""
from rnnsearch.model.attention import AdditiveAttention
from rnnsearch.model.decoder import Decoder, DecoderState, EncoderOutput
from rnnsearch.model.encoder import Encoder, PaperGRU
from rnnsearch.model.seq2seq import Seq2Seq, build_model, evaluating, init_paper, init_xavier, load_model

__all__ = ["AdditiveAttention", "Decoder", "DecoderState", "EncoderOutput", "Encoder",
           "PaperGRU", "Seq2Seq", "build_model", "evaluating", "init_paper", "init_xavier", "load_model"]
