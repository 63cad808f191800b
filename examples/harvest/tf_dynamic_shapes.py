"""TensorFlow 2 programs whose XLA graphs hold bounded dynamic shapes (`f32[<=300,16]`), which
XLA's DynamicPadder pads: Keras embedding fits with `jit_compile=True` under ten optimizers (the
embedding's sparse gradient goes through tf.unique, and Adagrad, RMSprop, Ftrl and others update
only the rows it names, inside conditionals), and `tf.function(jit_compile=True)` steps with
tf.unique and unsorted segment sums, a boolean mask, and tf.where with gather_nd. Run it under
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


def embedding_fit(optimizer):
    m = keras.Sequential(
        [
            keras.Input((12,), dtype="int32"),
            keras.layers.Embedding(300, 16),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(3),
        ]
    )
    m.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    m.fit(rng.integers(0, 300, (16, 12)), rng.integers(0, 3, 16), batch_size=8, epochs=1, verbose=0)


@tf.function(jit_compile=True)
def unique_sums(ids, values):
    unique, index = tf.unique(ids)
    sums = tf.math.unsorted_segment_sum(values, index, tf.size(unique))
    return tf.reduce_sum(sums * 2.0) + tf.cast(tf.size(unique), tf.float32)


@tf.function(jit_compile=True)
def masked_mean(x):
    selected = tf.boolean_mask(x, x > 0.0)
    return tf.reduce_sum(selected) / tf.cast(tf.maximum(tf.size(selected), 1), tf.float32)


@tf.function(jit_compile=True)
def where_gather(x):
    where = tf.where(x > 0.5)
    return tf.reduce_sum(tf.gather_nd(x, where)) + tf.cast(tf.shape(where)[0], tf.float32)


for optimizer in (
    keras.optimizers.SGD(0.1),
    keras.optimizers.SGD(0.1, momentum=0.9),
    keras.optimizers.Adagrad(0.1),
    keras.optimizers.RMSprop(1e-3),
    keras.optimizers.Adam(1e-3),
    keras.optimizers.Ftrl(0.1),
    keras.optimizers.Adamax(1e-3),
    keras.optimizers.Nadam(1e-3),
    keras.optimizers.Adadelta(1.0),
    keras.optimizers.Lion(1e-4),
):
    embedding_fit(optimizer)
unique_sums(
    tf.constant(rng.integers(0, 20, 40), tf.int32), tf.constant(rng.standard_normal(40), tf.float32)
)
masked_mean(tf.constant(rng.standard_normal((8, 9)), tf.float32))
where_gather(tf.constant(rng.random((6, 7)), tf.float32))
