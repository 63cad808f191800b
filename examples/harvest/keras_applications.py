"""Keras's applications on TensorFlow, compiled by XLA (`model.compile(jit_compile=True)`): a
MobileNetV3 (small), a ResNet50V2, an EfficientNetV2-B0 and a DenseNet-121 with random weights,
each trained for one epoch of one batch (Adam) and run once for inference on four 32x32 images.
Their graphs hold what the project's own TensorFlow models do not: stateless dropout keyed by u64
seeds, hard-swish, squeeze-and-excitation, dense blocks of concatenations, 1,000 to 22,000
instructions. Run it under `hlogym harvest` in a venv with
datasets/corpus/requirements-tensorflow.txt (datasets/probes/generate.py does).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

APPLICATIONS = (
    lambda: keras.applications.MobileNetV3Small(
        input_shape=(32, 32, 3), weights=None, classes=4, include_preprocessing=False
    ),
    lambda: keras.applications.ResNet50V2(input_shape=(32, 32, 3), weights=None, classes=4),
    lambda: keras.applications.EfficientNetV2B0(
        input_shape=(32, 32, 3), weights=None, classes=4, include_preprocessing=False
    ),
    lambda: keras.applications.DenseNet121(input_shape=(32, 32, 3), weights=None, classes=4),
)


def main() -> None:
    keras.utils.set_random_seed(0)
    images = np.random.RandomState(0).rand(4, 32, 32, 3).astype("float32")
    labels = np.array([0, 1, 2, 3])
    for make in APPLICATIONS:
        model = make()
        model.compile(
            optimizer=keras.optimizers.Adam(1e-3),
            loss="sparse_categorical_crossentropy",
            jit_compile=True,
        )
        model.fit(images, labels, batch_size=4, epochs=1, verbose=0)
        model.predict(images, verbose=0)


if __name__ == "__main__":
    main()
