"""Hugging Face transformers' PyTorch models trained and run on PyTorch/XLA: a BERT sequence
classifier, a GPT-2 language model, a Llama-style language model in bf16 (grouped-query attention,
rotary positions, RMS norm) and a T5 encoder-decoder, each with random weights from a small config
(nothing is downloaded), for two AdamW steps and one inference pass on 2 sequences of 16 tokens.
Their graphs hold what the project's own PyTorch models do not: the causal models' shifted labels,
attention masks built on the device, rotary embeddings, T5's relative position buckets.

    hlogym harvest --out DIR -- VENV/bin/python examples/harvest/torch_transformers.py

VENV holds torch and torch_xla (datasets/corpus/requirements-torch.txt) and transformers
(datasets/probes/requirements-torch-libraries.txt); hlogym harvest runs it on XLA's CPU backend
(PJRT_DEVICE=CPU).
"""

import torch
import torch_xla
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    T5Config,
    T5ForConditionalGeneration,
)


def train_and_infer(model: torch.nn.Module, batch: dict, bf16: bool = False) -> None:
    device = torch_xla.device()
    model = model.to(device=device, dtype=torch.bfloat16 if bf16 else torch.float32)
    batch = {key: value.to(device) for key, value in batch.items()}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for _ in range(2):
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()
        torch_xla.sync()
    model.eval()
    with torch.no_grad():
        model(**batch)
        torch_xla.sync()


def main() -> None:
    torch.manual_seed(0)
    tokens = torch.randint(0, 100, (2, 16))
    bert = BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=3,
    )
    train_and_infer(
        BertForSequenceClassification(bert),
        {
            "input_ids": tokens,
            "attention_mask": torch.ones_like(tokens),
            "labels": torch.tensor([0, 2]),
        },
    )
    gpt2 = GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32)
    train_and_infer(GPT2LMHeadModel(gpt2), {"input_ids": tokens, "labels": tokens})
    llama = LlamaConfig(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    train_and_infer(LlamaForCausalLM(llama), {"input_ids": tokens, "labels": tokens}, bf16=True)
    t5 = T5Config(
        vocab_size=100,
        d_model=32,
        d_ff=64,
        d_kv=8,
        num_layers=2,
        num_heads=4,
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    train_and_infer(T5ForConditionalGeneration(t5), {"input_ids": tokens, "labels": tokens})


if __name__ == "__main__":
    main()
