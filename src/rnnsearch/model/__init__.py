from .attention import AdditiveAttention
from .decoder import Decoder, DecoderState, EncoderOutput
from .encoder import Encoder, PaperGRU
from .seq2seq import Seq2Seq, build_model, init_paper, init_xavier

__all__ = ["AdditiveAttention", "Decoder", "DecoderState", "EncoderOutput", "Encoder",
           "PaperGRU", "Seq2Seq", "build_model", "init_paper", "init_xavier"]
