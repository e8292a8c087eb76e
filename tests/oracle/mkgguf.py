#!/usr/bin/env python3
"""mkgguf.py - write a minimal llama or gemma3 shape-twin GGUF.

Independent of kvplan: the oracle uses it to check that the probe itself
reproduces published llama.cpp numbers (a Qwen3-8B-shaped llama model, whose
KV cache is the same under the llama architecture, and Gemma-3-4B) before it
trusts the probe to judge kvplan.

  mkgguf.py OUT.gguf [--arch llama|gemma3] [--layers 36] [--embd 4096]
                     [--ff 12288] [--heads 32] [--kv-heads 8] [--head-dim 128]
                     [--vocab 151936] [--ctx-train 40960] [--window W]

The defaults are Qwen3-8B's shape.  Gemma-3-4B: --arch gemma3 --layers 34
--embd 2560 --ff 10240 --heads 8 --kv-heads 4 --head-dim 256 --vocab 262208
--ctx-train 131072 --window 1024 (gemma3's default pattern: every 6th layer
full).

Real shapes, tensor data left as a sparse hole (the file is truncated to its
full size, so it costs a few KB on disk).  Uses only the standard library.
"""
import argparse
import struct

GGUF_ALIGN = 32
T_U32, T_F32, T_STRING = 4, 6, 8
GGML_F32, GGML_F16 = 0, 1


def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, typ, val):
    out = s(key) + struct.pack("<I", typ)
    if typ == T_U32:
        out += struct.pack("<I", val)
    elif typ == T_F32:
        out += struct.pack("<f", val)
    elif typ == T_STRING:
        out += s(val)
    else:
        raise ValueError(typ)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--arch", choices=("llama", "gemma3"), default="llama")
    ap.add_argument("--layers", type=int, default=36)
    ap.add_argument("--embd", type=int, default=4096)
    ap.add_argument("--ff", type=int, default=12288)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=151936)
    ap.add_argument("--ctx-train", type=int, default=40960)
    ap.add_argument("--window", type=int, default=0)
    a = ap.parse_args()

    hd, A = a.head_dim, a.arch
    meta = [
        ("general.architecture", T_STRING, A),
        ("general.name", T_STRING, "oracle-%s-twin" % A),
        (A + ".block_count", T_U32, a.layers),
        (A + ".context_length", T_U32, a.ctx_train),
        (A + ".embedding_length", T_U32, a.embd),
        (A + ".feed_forward_length", T_U32, a.ff),
        (A + ".attention.head_count", T_U32, a.heads),
        (A + ".attention.head_count_kv", T_U32, a.kv_heads),
        (A + ".attention.key_length", T_U32, hd),
        (A + ".attention.value_length", T_U32, hd),
        (A + ".rope.dimension_count", T_U32, hd),
        (A + ".attention.layer_norm_rms_epsilon", T_F32, 1e-6),
        (A + ".vocab_size", T_U32, a.vocab),
        ("tokenizer.ggml.model", T_STRING, "none"),
    ]
    if a.window:
        meta.append((A + ".attention.sliding_window", T_U32, a.window))

    # (name, dims in ggml order (ne0 first), type)
    tensors = [("token_embd.weight", (a.embd, a.vocab), GGML_F16),
               ("output_norm.weight", (a.embd,), GGML_F32),
               ("output.weight", (a.embd, a.vocab), GGML_F16)]
    for i in range(a.layers):
        p = "blk.%d." % i
        tensors += [
            (p + "attn_norm.weight", (a.embd,), GGML_F32),
            (p + "attn_q.weight", (a.embd, a.heads * hd), GGML_F16),
            (p + "attn_k.weight", (a.embd, a.kv_heads * hd), GGML_F16),
            (p + "attn_v.weight", (a.embd, a.kv_heads * hd), GGML_F16),
            (p + "attn_output.weight", (a.heads * hd, a.embd), GGML_F16),
            (p + "ffn_norm.weight", (a.embd,), GGML_F32),
            (p + "ffn_gate.weight", (a.embd, a.ff), GGML_F16),
            (p + "ffn_down.weight", (a.ff, a.embd), GGML_F16),
            (p + "ffn_up.weight", (a.embd, a.ff), GGML_F16),
        ]
        if A == "gemma3":
            tensors += [
                (p + "post_attention_norm.weight", (a.embd,), GGML_F32),
                (p + "attn_q_norm.weight", (hd,), GGML_F32),
                (p + "attn_k_norm.weight", (hd,), GGML_F32),
                (p + "post_ffw_norm.weight", (a.embd,), GGML_F32),
            ]

    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta))
    head += b"".join(kv(*m) for m in meta)
    off = 0
    for name, dims, typ in tensors:
        head += s(name) + struct.pack("<I", len(dims))
        head += b"".join(struct.pack("<Q", d) for d in dims)
        head += struct.pack("<IQ", typ, off)
        n = 1
        for d in dims:
            n *= d
        size = n * (4 if typ == GGML_F32 else 2)
        off += (size + GGUF_ALIGN - 1) // GGUF_ALIGN * GGUF_ALIGN
    head += b"\0" * (-len(head) % GGUF_ALIGN)

    with open(a.out, "wb") as f:
        f.write(head)
        f.truncate(len(head) + off)


if __name__ == "__main__":
    main()
