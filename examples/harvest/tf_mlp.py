"""A small TensorFlow training script to harvest: an MLP classifier whose training step is a
`tf.function(jit_compile=True)`, so TensorFlow hands it to XLA.

    hlogym harvest --out my_tf_mlp -- VENV/bin/python examples/harvest/tf_mlp.py

VENV holds TensorFlow (datasets/corpus/requirements-tensorflow.txt).
"""

import tensorflow as tf


def main():
    tf.random.set_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.Input((32,)),
            tf.keras.layers.Dense(64, activation="gelu"),
            tf.keras.layers.LayerNormalization(),
            tf.keras.layers.Dense(10),
        ]
    )
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(jit_compile=True)
    def train_step(x, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for step in range(3):
        x = tf.random.normal((16, 32))
        labels = tf.random.uniform((16,), 0, 10, dtype=tf.int32)
        print(f"step {step}: loss {float(train_step(x, labels)):.4f}")


if __name__ == "__main__":
    main()
