"""PyTorch models compiled by JAX through torchax (PyTorch on JAX: torch operations run as JAX
ones, `jax.jit` lowers them), a frontend none of the other probes uses: torchvision's ResNet-18
(an AdamW training step with batch norm in training mode, and inference), MobileNetV3 (small,
bf16 inference) and a Vision Transformer (an AdamW step), Hugging Face's GPT-2 (an AdamW step of a
two-layer model), BERT (a classifier's forward) and a Llama-style decoder (bf16 forward: grouped
query attention, rotary positions), and torch operations as torchax translates them (scaled
dot-product attention, a transposed convolution, group norm, cumulative sums, sorting, index_add,
an LSTM cell unrolled by hand). The optimizer steps are optax's, as torchax.train.make_train_step
writes them.

    hlogym harvest --out DIR -- VENV/bin/python examples/harvest/torchax_models.py

VENV holds the project's jax (requirements.txt) and datasets/probes/requirements-torchax.txt
(torchax with torch 2.9.0; datasets/probes/generate.py makes it).
"""

import jax
import optax
import torch
import torch.nn.functional as F
import torchax
import torchvision
import transformers
from torchax import interop
from torchax.train import make_train_step

env = torchax.default_env()


def named(function, name: str):
    """`function` under `name`, which jax.jit gives the module it lowers."""
    function.__name__ = name
    return function


def train_step(name: str, model: torch.nn.Module, inputs, labels, loss_fn) -> None:
    """One jitted AdamW step of `model` on (inputs, labels), run twice (the second from the first's
    result, as a training loop would)."""
    jittable = interop.JittableModule(model)
    weights, buffers = env.t2j_copy((jittable.params, jittable.buffers))

    def model_fn(weights, buffers, args):
        return jittable.functional_call("forward", weights, buffers, *args)

    optimizer = optax.adamw(1e-3)
    opt_state = optimizer.init(weights)
    torch_step = make_train_step(model_fn, loss_fn, optimizer)
    # make_train_step's step takes JAX arrays and returns its loss as a torch tensor.
    step = jax.jit(named(lambda *state: interop.jax_view(torch_step(*state)), name))
    args, labels = env.t2j_copy(((inputs,), labels))
    for _ in range(2):
        loss, weights, opt_state = step(weights, buffers, opt_state, args, labels)
    jax.block_until_ready(loss)


def infer(name: str, model: torch.nn.Module, *inputs) -> None:
    states, forward = torchax.extract_jax(model.eval())
    jax.block_until_ready(jax.jit(named(forward, name))(states, env.t2j_copy(inputs)))


class LogitsOf(torch.nn.Module):
    """A Hugging Face model's logits alone (its output object is no JAX type)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, tokens):
        return self.model(tokens).logits


def cross_entropy(logits, labels):
    return F.cross_entropy(logits, labels)


def lm_loss(outputs, labels):
    logits = outputs.logits[:, :-1]
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))


def operations(x, w, index):
    """Torch operations as torchax translates them."""
    q = x.reshape(2, 4, 16, 8)
    attention = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    upsampled = F.conv_transpose2d(x.reshape(2, 8, 8, 8), w, stride=2, padding=1)
    normed = F.group_norm(upsampled, 4)
    totals = torch.cumsum(normed.flatten(1), 1)
    ordered, order = torch.sort(x.flatten(), descending=True)
    gathered = x.new_zeros(16, 8).index_add(0, index, x.reshape(-1, 8)[:32])
    h = x.new_zeros(2, 8)
    c = x.new_zeros(2, 8)
    for t in range(6):  # an LSTM cell, unrolled
        gates = torch.cat([x[:, t * 8 : t * 8 + 8], h], 1) @ w.reshape(16, -1)[:, :32]
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
    return attention.sum() + totals[:, -1].sum() + ordered[:4].sum() + order[0] + gathered.sum(), h


def main() -> None:
    torch.manual_seed(0)
    env.manual_seed(0)  # torchax's own key (dropout's), drawn from a fresh seed otherwise
    images = torch.randn(2, 3, 32, 32)
    classes = torch.randint(0, 10, (2,))
    resnet = torchvision.models.resnet18(num_classes=10)
    train_step("resnet18_adamw_step", resnet, images, classes, cross_entropy)
    infer("resnet18_inference", resnet, images)
    mobilenet = torchvision.models.mobilenet_v3_small(num_classes=10).to(torch.bfloat16)
    infer("mobilenet_v3_bf16_inference", mobilenet, images.to(torch.bfloat16))

    gpt2 = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=256, n_positions=64)
    )
    tokens = torch.randint(0, 256, (2, 16))
    train_step("gpt2_adamw_step", gpt2, tokens, tokens, lm_loss)
    bert = transformers.BertForSequenceClassification(
        transformers.BertConfig(
            num_hidden_layers=2,
            num_attention_heads=2,
            hidden_size=32,
            intermediate_size=64,
            vocab_size=256,
            num_labels=3,
            # SDPA's mask preparation asks whether the mask is all ones, which a trace cannot.
            attn_implementation="eager",
            return_dict=False,  # a tuple, which JAX can return
        )
    )
    # With a mask: BERT's padding check reads the tokens' values otherwise.
    infer("bert_classifier", bert, tokens, torch.ones_like(tokens))

    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            hidden_size=32,
            intermediate_size=64,
            vocab_size=256,
            attn_implementation="eager",
        )
    ).to(torch.bfloat16)
    infer("llama_bf16_forward", LogitsOf(llama), tokens)
    vit = torchvision.models.VisionTransformer(
        image_size=32,
        patch_size=8,
        num_layers=2,
        num_heads=2,
        hidden_dim=32,
        mlp_dim=64,
        num_classes=10,
    )
    train_step("vit_adamw_step", vit, images, classes, cross_entropy)

    x = torch.randn(2, 512)
    w = torch.randn(8, 4, 4, 4)
    index = torch.randint(0, 16, (32,))
    with env:
        jitted = jax.jit(named(interop.jax_view(operations), "torch_operations"))
        jax.block_until_ready(jitted(*env.t2j_copy((x, w, index))))


if __name__ == "__main__":
    main()
