"""PyTorch operations the project's PyTorch models and the torchvision and Hugging Face probes do
not use, on PyTorch/XLA: a two-layer LSTM language model and a bidirectional GRU classifier
(RMSprop), a CTC loss, a spatial transformer (affine_grid and grid_sample, pixel_shuffle,
bicubic interpolation, unfold, adaptive pooling), QR, Cholesky and triangular solves, FFTs,
sorting, top-k, k-th value, median, cumulative sums, products and logsumexp, scatter_reduce,
index_add, bucketize, searchsorted, roll, triu and histc, an EmbeddingBag with multi-head
attention (dropout), GroupNorm and a transposed convolution (AdamW), and a bf16 step of causal
scaled-dot-product attention and max pooling with indices; then, with the gradients' norm
clipped, a 3-D CNN (Adagrad, label smoothing), nn.Transformer (Adadelta), special functions
(erfinv, lgamma, digamma, i0, cdist; NAdam) and depthwise convolutions (RAdam); reductions
(quantile, var_mean, cummax, renorm, kron) and sampling (normal, gamma, bernoulli, multinomial).
The training steps run twice (the second step's graph holds the optimizer's state).

    hlogym harvest --out DIR -- VENV/bin/python examples/harvest/torch_ops.py

VENV holds torch and torch_xla (datasets/corpus/requirements-torch.txt); hlogym harvest runs it
on XLA's CPU backend (PJRT_DEVICE=CPU). datasets/probes/generate.py torch_ops makes the probe.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

dev = torch_xla.device()
torch.manual_seed(0)


def step(model, make_loss, opt=torch.optim.Adam, lr=1e-3, clip=False):
    """Two training steps of `model` on the XLA device, each handed to XLA by torch_xla.sync();
    with `clip`, the gradients' global norm clipped to 1 first."""
    model = model.to(dev)
    o = opt(model.parameters(), lr=lr)
    for _ in range(2):
        o.zero_grad()
        make_loss(model).backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        o.step()
        torch_xla.sync()


# LSTM language model step
class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.e = nn.Embedding(50, 16)
        self.r = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.o = nn.Linear(32, 50)

    def forward(self, x):
        return self.o(self.r(self.e(x))[0])


x = torch.randint(0, 50, (4, 12)).to(dev)
step(LM(), lambda m: F.cross_entropy(m(x[:, :-1]).reshape(-1, 50), x[:, 1:].reshape(-1)))


# Bidirectional GRU classifier
class G(nn.Module):
    def __init__(self):
        super().__init__()
        self.r = nn.GRU(8, 16, bidirectional=True, batch_first=True)
        self.o = nn.Linear(32, 3)

    def forward(self, x):
        return self.o(self.r(x)[0].mean(1))


xs = torch.randn(4, 10, 8).to(dev)
ys = torch.randint(0, 3, (4,)).to(dev)
step(G(), lambda m: F.cross_entropy(m(xs), ys), opt=torch.optim.RMSprop)


# CTC loss
class C(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 6)

    def forward(self, x):
        return self.l(x).log_softmax(-1)


xc = torch.randn(15, 2, 8).to(dev)
tgt = torch.randint(1, 6, (2, 5)).to(dev)
il = torch.full((2,), 15, dtype=torch.long).to(dev)
tl = torch.tensor([5, 3]).to(dev)
step(C(), lambda m: F.ctc_loss(m(xc), tgt, il, tl))


# grid_sample / interpolate / pixel_shuffle / unfold
class S(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 12, 3, padding=1)
        self.theta = nn.Parameter(torch.eye(2, 3).unsqueeze(0).repeat(2, 1, 1) + 0.05)

    def forward(self, x):
        g = F.affine_grid(self.theta, (2, 3, 8, 8), align_corners=False)
        y = F.grid_sample(x, g, align_corners=False)
        y = F.pixel_shuffle(self.c(y), 2)
        y = F.interpolate(y, scale_factor=0.5, mode="bicubic", align_corners=False)
        u = F.unfold(y, 2, stride=2)
        return u.pow(2).mean() + F.adaptive_avg_pool2d(y, 3).sum()


xi = torch.randn(2, 3, 8, 8).to(dev)
step(S(), lambda m: m(xi), opt=torch.optim.SGD)
# Linear algebra, forward only: QR (XLA's Qr and ProductOfElementaryHouseholderReflectors custom
# calls, which its qr_expander expands), batched QR, Cholesky with a triangular solve, solve,
# inverse and log-determinant (triangular-solve instructions). Eigendecompositions and singular
# values are left out: XLA's eigh_expander is not modelled exactly (docs/performance.md).
with torch.no_grad():
    a = torch.randn(6, 6).to(dev)
    s = a @ a.T + 6 * torch.eye(6, device=dev)
    q, r = torch.linalg.qr(a)
    lower = torch.linalg.cholesky(s)
    total = (
        q.sum()
        + r.abs().sum()
        + lower.sum()
        + torch.linalg.solve_triangular(lower, a, upper=False).sum()
        + torch.linalg.solve(s, a).sum()
        + torch.linalg.inv(s).sum()
        + torch.linalg.slogdet(s)[1]
        + torch.linalg.qr(torch.randn(3, 5, 4).to(dev))[1].abs().sum()
    )
    print(total.cpu())  # one graph

# Fourier transforms, forward only.
with torch.no_grad():
    a = torch.randn(6, 8).to(dev)
    out = torch.fft.rfft(a, dim=-1).abs().sum() + torch.fft.ifft2(a.to(torch.complex64)).real.sum()
    print(out.cpu())
# sorting, cumulative ops, scatter/index ops
with torch.no_grad():
    v = torch.randn(64).to(dev)
    idx = torch.randint(0, 8, (64,)).to(dev)
    r = (
        torch.sort(v)[0][:5].sum()
        + torch.topk(v, 4)[1].sum()
        + torch.kthvalue(v, 10)[0]
        + torch.median(v)
        + torch.cumsum(v, 0).sum()
        + torch.cumprod(v.sigmoid(), 0).sum()
        + torch.logcumsumexp(v, 0).sum()
        + torch.zeros(8, device=dev)
        .scatter_reduce(0, idx, v, reduce="amax", include_self=False)
        .sum()
        + torch.zeros(8, device=dev).index_add(0, idx, v).sum()
        + torch.bucketize(v, torch.linspace(-2, 2, 5, device=dev)).sum()
        + torch.searchsorted(torch.sort(v)[0], torch.tensor([0.0, 1.0], device=dev)).sum()
        + torch.roll(v, 3)[0]
        + torch.triu(v.reshape(8, 8), 1).sum()
        + torch.histc(v, bins=5, min=-2, max=2).sum()
    )
    print(r.cpu())


# EmbeddingBag + MultiheadAttention + GroupNorm + ConvTranspose training step, dropout
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.eb = nn.EmbeddingBag(40, 16, mode="mean")
        self.att = nn.MultiheadAttention(16, 4, batch_first=True, dropout=0.1)
        self.gn = nn.GroupNorm(4, 16)
        self.ct = nn.ConvTranspose1d(16, 8, 4, stride=2)
        self.o = nn.Linear(8, 2)

    def forward(self, ids, offs, seq):
        b = self.eb(ids, offs).unsqueeze(1)
        h, _ = self.att(seq + b, seq, seq)
        h = self.gn(h.transpose(1, 2))
        return self.o(F.dropout(self.ct(h), 0.2).mean(-1))


ids = torch.randint(0, 40, (12,)).to(dev)
offs = torch.tensor([0, 3, 7, 9]).to(dev)
seq = torch.randn(4, 6, 16).to(dev)
lab = torch.randint(0, 2, (4,)).to(dev)
step(M(), lambda m: F.cross_entropy(m(ids, offs, seq), lab), opt=torch.optim.AdamW)


# bf16 SDPA step with max_pool indices backward
class P(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(16, 48)
        self.c = nn.Conv2d(1, 4, 3)

    def forward(self, x, im):
        q, k, v = self.q(x).chunk(3, -1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        p, _ = F.max_pool2d(self.c(im), 2, return_indices=True)
        return a.float().pow(2).mean() + p.float().mean()


xb = torch.randn(2, 8, 16).to(dev).bfloat16()
imb = torch.randn(2, 1, 9, 9).to(dev).bfloat16()
step(P().bfloat16(), lambda m: m(xb, imb), opt=torch.optim.SGD)


# A 3-D CNN (BatchNorm3d, SiLU, adaptive max pooling) with label smoothing and Adagrad
class Cnn3d(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv3d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm3d(4)
        self.o = nn.Linear(4, 3)

    def forward(self, x):
        return self.o(F.adaptive_max_pool3d(F.silu(self.bn(self.c(x))), 1).flatten(1))


x3 = torch.randn(2, 2, 6, 6, 6).to(dev)
y3 = torch.randint(0, 3, (2,)).to(dev)
step(
    Cnn3d(),
    lambda m: F.cross_entropy(m(x3), y3, label_smoothing=0.1),
    torch.optim.Adagrad,
    lr=0.01,
    clip=True,
)

# nn.Transformer (encoder and decoder, a causal mask) with Adadelta
transformer = nn.Transformer(
    d_model=16,
    nhead=2,
    num_encoder_layers=1,
    num_decoder_layers=1,
    dim_feedforward=32,
    batch_first=True,
)
src = torch.randn(2, 5, 16).to(dev)
tgt = torch.randn(2, 4, 16).to(dev)
causal = nn.Transformer.generate_square_subsequent_mask(4).to(dev)
step(
    transformer,
    lambda m: m(src, tgt, tgt_mask=causal).pow(2).mean(),
    torch.optim.Adadelta,
    lr=1.0,  # Adadelta's default
    clip=True,
)


# Special functions (erfinv, lgamma, digamma, i0, tanh-GELU, cdist, cosine similarity, mish,
# logit) with NAdam
class Special(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        h = self.l(x)
        return (
            torch.special.erfinv(torch.tanh(h) * 0.9).sum()
            + torch.lgamma(h.abs() + 1).sum()
            + torch.digamma(h.abs() + 1).sum()
            + torch.special.i0(h).sum()
            + F.gelu(h, approximate="tanh").sum()
            + torch.cdist(h, h).sum()
            + F.cosine_similarity(h, x).sum()
            + F.softplus(h, beta=2).sum()
            + F.mish(h).sum()
            + torch.logit(torch.sigmoid(h), eps=1e-6).sum()
        )


xs = torch.randn(4, 8).to(dev)
step(Special(), lambda m: m(xs), torch.optim.NAdam, clip=True)


# Depthwise and pointwise convolutions, hard-swish, LayerNorm, nearest upsampling, RAdam
class Depthwise(nn.Module):
    def __init__(self):
        super().__init__()
        self.d = nn.Conv2d(4, 4, 3, groups=4, padding=1)
        self.p = nn.Conv2d(4, 8, 1)
        self.ln = nn.LayerNorm([8, 6, 6])
        self.u = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        return self.u(self.ln(self.p(F.hardswish(self.d(x))))).mean()


xd = torch.randn(2, 4, 6, 6).to(dev)
step(Depthwise(), lambda m: m(xd), torch.optim.RAdam, clip=True)

# Reductions and index forms, forward only; then sampling from distributions on the device
with torch.no_grad():
    v = torch.randn(10, 6).to(dev)
    out = (
        F.one_hot(torch.argmax(v, 1), 6).sum()
        + torch.amax(v, 0).sum()
        + torch.nanmean(v)
        + torch.var_mean(v, 0)[0].sum()
        + torch.quantile(v[:, 0], 0.3)
        + torch.diff(v, dim=0).sum()
        + torch.trace(v[:6])
        + torch.kron(v[:2, :2], v[:2, :2]).sum()
        + torch.tril_indices(4, 4).sum()
        + torch.cummax(v, 0)[0].sum()
        + torch.renorm(v, 2, 0, 1.0).sum()
        + torch.nan_to_num(v.log()).sum()
    )
    print(out.cpu())
    normal = torch.distributions.Normal(torch.zeros(4, device=dev), torch.ones(4, device=dev))
    gamma = torch.distributions.Gamma(torch.ones(4, device=dev) * 2, 1.0)
    draws = (
        normal.sample((3,)).sum()
        + gamma.sample().sum()
        + torch.bernoulli(torch.full((5,), 0.3, device=dev)).sum()
        + torch.multinomial(torch.ones(5, device=dev), 3).sum()
    )
    print(draws.cpu())
