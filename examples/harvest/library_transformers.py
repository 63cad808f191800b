"""Transformers written with model libraries the corpus does not use: penzai's Gemma-2-style
decoder (local and global attention layers in turn, soft caps, GeGLU, tied embeddings) and its
Mistral-style decoder (sliding-window attention, SwiGLU), each as an AdamW training step (optax)
and a forward, in bf16 and f32; Hugging Face's Flax ViT in bf16 and f32 inference. Run it under
`hlogym harvest` in a venv with datasets/probes/requirements-libraries.txt
(datasets/probes/generate.py does).
"""

import jax
import jax.numpy as jnp
import optax
from penzai import pz
from penzai.models.transformer.variants import llamalike_common as llamalike
from transformers import FlaxViTForImageClassification, ViTConfig

VOCAB, SEQ = 512, 64


def decoder(gemma, dtype):
    local = llamalike.AttentionTypeSlidingWindowCausal(16 if gemma else 24)
    config = llamalike.LlamalikeTransformerConfig(
        num_kv_heads=2,
        query_head_multiplier=2,
        embedding_dim=128,
        projection_dim=32,
        mlp_hidden_dim=256,
        num_decoder_blocks=4,
        vocab_size=VOCAB,
        mlp_variant="geglu_approx" if gemma else "swiglu",
        tie_embedder_and_logits=gemma,
        attention_type=(local, llamalike.AttentionTypeGlobalCausal()) if gemma else local,
        use_post_attn_norm=gemma,
        use_post_ffw_norm=gemma,
        final_logit_softcap=30.0 if gemma else None,
        attn_logits_soft_cap=50.0 if gemma else None,
        activation_dtype=dtype,
    )
    return llamalike.build_llamalike_transformer(config, init_base_rng=jax.random.key(0))


def train_and_eval(gemma, dtype, tokens):
    unbound, params = pz.unbind_params(decoder(gemma, dtype), freeze=True)

    def loss(params, tokens):
        logits = pz.bind_variables(unbound, params)(pz.nx.wrap(tokens[:, :-1]).tag("batch", "seq"))
        logp = pz.nx.nmap(jax.nn.log_softmax)(logits.untag("vocabulary")).tag("vocabulary")
        labels = pz.nx.wrap(jax.nn.one_hot(tokens[:, 1:], VOCAB)).tag("batch", "seq", "vocabulary")
        return -(logp * labels).unwrap("batch", "seq", "vocabulary").sum() / tokens.shape[0]

    optimizer = optax.adamw(1e-3)

    @jax.jit
    def step(params, state, tokens):
        value, grads = jax.value_and_grad(loss)(params, tokens)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    jax.block_until_ready(step(params, optimizer.init(params), tokens))
    jax.block_until_ready(jax.jit(loss)(params, tokens))


def vit_infer(dtype):
    config = ViTConfig(
        hidden_size=128,
        num_hidden_layers=4,
        num_attention_heads=4,
        intermediate_size=256,
        image_size=64,
        patch_size=8,
        num_labels=10,
    )
    model = FlaxViTForImageClassification(config, dtype=dtype, seed=0)
    pixels = jax.random.normal(jax.random.key(2), (2, 3, 64, 64))
    classify = jax.jit(lambda p, x: model(pixel_values=x, params=p).logits.argmax(-1))
    jax.block_until_ready(classify(model.params, pixels))


def main():
    tokens = jax.random.randint(jax.random.key(1), (2, SEQ + 1), 0, VOCAB)
    for gemma in (True, False):
        for dtype in (jnp.bfloat16, jnp.float32):
            train_and_eval(gemma, dtype, tokens)
    for dtype in (jnp.bfloat16, jnp.float32):
        vit_infer(dtype)


if __name__ == "__main__":
    main()
