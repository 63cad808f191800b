"""TensorFlow 2 training steps and functions of kinds the TensorFlow probes lack, compiled by XLA
(Keras's `jit_compile=True` fit and predict, `tf.function(jit_compile=True)`): a Keras transformer
encoder classifier (multi-head attention, layer norms) fit with AdamW in f32 and mixed_float16, a
text CNN (embedding, Conv1D, global max pooling, dropout) fit with Adam, a decoder
(Conv2DTranspose, batch norm, bilinear upsampling) fit with Nesterov SGD, a tf.scan RNN trained
by hand with a gradient tape, global-norm clipping and RMSprop, a graph network step
(unsorted_segment_sum), log-STFT features (tf.signal.stft), top_k, argsort, reverse cumsum,
logsumexp and softmax, and a residual CNN with batch norm fit with Adam. Run it under
`hlogym harvest` in a venv with datasets/corpus/requirements-tensorflow.txt
(datasets/probes/generate.py does).
"""

import os

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
tf.random.set_seed(0)
keras.utils.set_random_seed(0)


def transformer_fit(policy="float32"):
    keras.mixed_precision.set_global_policy(policy)
    inp = keras.Input((16,), dtype="int32")
    x = keras.layers.Embedding(200, 32)(inp)
    for _ in range(2):
        a = keras.layers.MultiHeadAttention(4, 8)(x, x)
        x = keras.layers.LayerNormalization()(x + a)
        f = keras.layers.Dense(64, activation="gelu")(x)
        x = keras.layers.LayerNormalization()(x + keras.layers.Dense(32)(f))
    out = keras.layers.Dense(2, dtype="float32")(keras.layers.GlobalAveragePooling1D()(x))
    m = keras.Model(inp, out)
    m.compile(
        optimizer=keras.optimizers.AdamW(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    m.fit(rng.integers(0, 200, (16, 16)), rng.integers(0, 2, 16), batch_size=8, epochs=1, verbose=0)
    m.predict(rng.integers(0, 200, (8, 16)), verbose=0)
    keras.mixed_precision.set_global_policy("float32")


def transformer_fit_f32():
    transformer_fit()


def transformer_fit_mixed():
    transformer_fit("mixed_float16")


def text_cnn():
    m = keras.Sequential(
        [
            keras.Input((32,), dtype="int32"),
            keras.layers.Embedding(500, 16),
            keras.layers.Conv1D(32, 5, activation="relu"),
            keras.layers.GlobalMaxPooling1D(),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(4),
        ]
    )
    m.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=True,
    )
    m.fit(rng.integers(0, 500, (16, 32)), rng.integers(0, 4, 16), batch_size=8, epochs=1, verbose=0)


def decoder_sgd():
    m = keras.Sequential(
        [
            keras.Input((8,)),
            keras.layers.Dense(4 * 4 * 16, activation="relu"),
            keras.layers.Reshape((4, 4, 16)),
            keras.layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu"),
            keras.layers.BatchNormalization(),
            keras.layers.UpSampling2D(interpolation="bilinear"),
            keras.layers.Conv2D(3, 3, padding="same", activation="sigmoid"),
        ]
    )
    m.compile(
        optimizer=keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True),
        loss="binary_crossentropy",
        jit_compile=True,
    )
    m.fit(
        rng.standard_normal((16, 8)).astype("float32"),
        rng.random((16, 16, 16, 3)).astype("float32"),
        batch_size=8,
        epochs=1,
        verbose=0,
    )


def custom_scan_rnn():
    W = tf.Variable(rng.standard_normal((8, 32)).astype("float32") * 0.1)
    U = tf.Variable(rng.standard_normal((32, 32)).astype("float32") * 0.1)
    V = tf.Variable(rng.standard_normal((32, 1)).astype("float32") * 0.1)
    opt = keras.optimizers.RMSprop(1e-3)

    @tf.function(jit_compile=True)
    def step(xs, ys):
        with tf.GradientTape() as tape:

            def cell(h, x):
                return tf.tanh(tf.matmul(x, W) + tf.matmul(h, U))

            hs = tf.scan(cell, tf.transpose(xs, [1, 0, 2]), initializer=tf.zeros((4, 32)))
            pred = tf.matmul(hs[-1], V)
            loss = tf.reduce_mean(tf.square(pred - ys))
        g = tape.gradient(loss, [W, U, V])
        g, _ = tf.clip_by_global_norm(g, 1.0)
        opt.apply_gradients(zip(g, [W, U, V]))
        return loss

    step(
        tf.constant(rng.standard_normal((4, 12, 8)).astype("float32")),
        tf.constant(rng.standard_normal((4, 1)).astype("float32")),
    )


def gnn_segment():
    w = tf.Variable(rng.standard_normal((16, 16)).astype("float32") * 0.2)

    @tf.function(jit_compile=True)
    def step(x, senders, receivers, y):
        with tf.GradientTape() as tape:
            msg = tf.gather(tf.matmul(x, w), senders)
            agg = tf.math.unsorted_segment_sum(msg, receivers, 32)
            h = tf.nn.relu(agg + x)
            loss = tf.reduce_mean(tf.square(tf.reduce_sum(h, 1) - y))
        g = tape.gradient(loss, w)
        w.assign_sub(0.01 * g)
        return loss

    step(
        tf.constant(rng.standard_normal((32, 16)).astype("float32")),
        tf.constant(rng.integers(0, 32, 64).astype("int32")),
        tf.constant(rng.integers(0, 32, 64).astype("int32")),
        tf.constant(rng.standard_normal(32).astype("float32")),
    )


def audio_stft():
    d = keras.layers.Dense(8)

    @tf.function(jit_compile=True)
    def feats(wave):
        s = tf.abs(tf.signal.stft(wave, 64, 32, 64))
        m = tf.math.log(s + 1e-6)
        return d(tf.reduce_mean(m, 1))

    feats(tf.constant(rng.standard_normal((4, 512)).astype("float32")))


def sorting_ops():
    @tf.function(jit_compile=True)
    def f(x):
        v, i = tf.math.top_k(x, 5)
        return (
            v,
            i,
            tf.argsort(x, axis=-1),
            tf.math.cumsum(x, axis=1, reverse=True),
            tf.math.reduce_logsumexp(x, 1),
            tf.nn.softmax(x),
        )

    f(tf.constant(rng.standard_normal((8, 32)).astype("float32")))


def resnet_fit():
    inp = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(16, 3, padding="same")(inp)
    for c in (16, 32, 64):
        r = keras.layers.Conv2D(c, 1, strides=2)(x)
        y = keras.layers.Conv2D(c, 3, strides=2, padding="same")(x)
        y = keras.layers.BatchNormalization()(y)
        y = keras.layers.ReLU()(y)
        y = keras.layers.Conv2D(c, 3, padding="same")(y)
        y = keras.layers.BatchNormalization()(y)
        x = keras.layers.ReLU()(keras.layers.Add()([r, y]))
    out = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling2D()(x))
    m = keras.Model(inp, out)
    m.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=True,
    )
    m.fit(
        rng.standard_normal((16, 32, 32, 3)).astype("float32"),
        rng.integers(0, 10, 16),
        batch_size=8,
        epochs=1,
        verbose=0,
    )


for program in (
    transformer_fit_f32,
    transformer_fit_mixed,
    text_cnn,
    decoder_sgd,
    custom_scan_rnn,
    gnn_segment,
    audio_stft,
    sorting_ops,
    resnet_fit,
):
    program()
