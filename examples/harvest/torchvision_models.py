"""torchvision's models trained and run on PyTorch/XLA: a ResNet-18, a MobileNetV3 (small), an
EfficientNet-B0 and a ConvNeXt (tiny) in bf16, and a two-layer Vision Transformer, each for two SGD
steps with momentum and one inference pass on 32x32 images, batch 2. Their graphs hold what the
project's own PyTorch models do not: max pooling after an explicit pad, dropout and stochastic
depth drawn on the device (rng-bit-generator), squeeze-and-excitation, layer scale.

    hlogym harvest --out DIR -- VENV/bin/python examples/harvest/torchvision_models.py

VENV holds torch and torch_xla (datasets/corpus/requirements-torch.txt) and torchvision
(datasets/probes/requirements-torch-libraries.txt); hlogym harvest runs it on XLA's CPU backend
(PJRT_DEVICE=CPU).
"""

import torch
import torch_xla
import torchvision


def train_and_infer(model: torch.nn.Module, bf16: bool) -> None:
    device = torch_xla.device()
    dtype = torch.bfloat16 if bf16 else torch.float32
    model = model.to(device=device, dtype=dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        images = torch.randn(2, 3, 32, 32, device=device, dtype=dtype)
        labels = torch.randint(0, 10, (2,), device=device)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(images).float(), labels)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
    model.eval()
    with torch.no_grad():
        model(torch.randn(2, 3, 32, 32, device=device, dtype=dtype))
        torch_xla.sync()


def main() -> None:
    torch.manual_seed(0)
    models = torchvision.models
    train_and_infer(models.resnet18(num_classes=10), bf16=False)
    train_and_infer(models.mobilenet_v3_small(num_classes=10), bf16=False)
    train_and_infer(models.efficientnet_b0(num_classes=10), bf16=True)
    vit = models.VisionTransformer(
        image_size=32,
        patch_size=8,
        num_layers=2,
        num_heads=2,
        hidden_dim=32,
        mlp_dim=64,
        num_classes=10,
    )
    train_and_infer(vit, bf16=False)
    train_and_infer(models.convnext_tiny(num_classes=10), bf16=True)


if __name__ == "__main__":
    main()
