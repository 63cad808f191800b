"""A small PyTorch/XLA training script to harvest: an MLP classifier trained with AdamW on an XLA
device; each `torch_xla.sync()` hands the step's graph to XLA.

    hlogym harvest --out my_mlp -- VENV/bin/python examples/harvest/torch_mlp.py

VENV holds torch and torch_xla (datasets/corpus/requirements-torch.txt); hlogym harvest runs it
on XLA's CPU backend (PJRT_DEVICE=CPU).
"""

import torch
import torch_xla


def main():
    device = torch_xla.device()
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.LayerNorm(64), torch.nn.GELU(), torch.nn.Linear(64, 10)
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        x = torch.randn(16, 32, device=device)
        labels = torch.randint(0, 10, (16,), device=device)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
