from rnnsearch.model.attention import AdditiveAttention
from rnnsearch.model.decoder import Decoder, DecoderState, EncoderOutput
from rnnsearch.model.encoder import Encoder, PaperGRU
from rnnsearch.model.seq2seq import Seq2Seq, build_model, init_paper, init_xavier

__all__ = ["AdditiveAttention", "Decoder", "DecoderState", "EncoderOutput", "Encoder",
           "PaperGRU", "Seq2Seq", "build_model", "init_paper", "init_xavier"]
