"""TensorFlow 2 programs whose XLA graphs hold bounded dynamic shapes (`f32[<=300,16]`), which
XLA's DynamicPadder pads: Keras embedding fits with `jit_compile=True` under ten optimizers (the
embedding's sparse gradient goes through tf.unique, and Adagrad, RMSprop, Ftrl and others update
only the rows it names, inside conditionals), and `tf.function(jit_compile=True)` steps with
tf.unique and unsorted segment sums, boolean masks (their mean; the selected rows through a dense
layer; a masked cross-entropy; two concatenated; reversed and summed cumulatively; padded into
top_k), tf.where with gather_nd and scatter_nd, tf.unique sorted, and a tf.while_loop over a mask's
selection, and a selection reshaped into pairs. Run it under
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


W = tf.constant(rng.standard_normal((6, 4)), tf.float32)


@tf.function(jit_compile=True)
def masked_rows_dense(x, mask):
    rows = tf.boolean_mask(x, mask)
    return tf.reduce_mean(tf.nn.relu(rows @ W), axis=0)


@tf.function(jit_compile=True)
def sorted_unique(ids):
    unique, _ = tf.unique(ids)
    s = tf.sort(unique)
    return tf.reduce_sum(s[:3]) + tf.reduce_max(s)


@tf.function(jit_compile=True)
def concat_masks(a, b):
    c = tf.concat([tf.boolean_mask(a, a > 0), tf.boolean_mask(b, b < 0)], 0)
    return tf.reduce_sum(c * c)


@tf.function(jit_compile=True)
def reversed_cumsum(a):
    selected = tf.boolean_mask(a, a > 0)
    return tf.reduce_sum(tf.cumsum(tf.reverse(selected, [0])))


@tf.function(jit_compile=True)
def masked_softmax_loss(logits, labels, mask):
    selected = tf.boolean_mask(logits, mask)
    targets = tf.boolean_mask(labels, mask)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(targets, selected))


@tf.function(jit_compile=True)
def where_scatter(x):
    where = tf.where(x > 0.3)
    updates = tf.gather_nd(x, where) * 2.0
    return tf.tensor_scatter_nd_add(tf.zeros_like(x), where, updates)


@tf.function(jit_compile=True)
def topk_of_mask(a):
    selected = tf.boolean_mask(a, a > 0)
    return tf.reduce_sum(tf.math.top_k(tf.pad(selected, [[0, 4]]), 3).values)


@tf.function(jit_compile=True)
def loop_over_mask(a):
    selected = tf.boolean_mask(a, a > 0)

    def body(i, total):
        return i + 1, total + tf.reduce_sum(selected * tf.cast(i, tf.float32))

    return tf.while_loop(lambda i, total: i < 3, body, (0, 0.0))[1]


@tf.function(jit_compile=True)
def reshaped_mask(a):
    selected = tf.boolean_mask(a, a > -10.0)
    return tf.reduce_sum(tf.reshape(selected, [-1, 2]), axis=1)[0]


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
x = tf.constant(rng.standard_normal((8, 6)), tf.float32)
mask = tf.constant(rng.random(8) > 0.4)
a = tf.constant(rng.standard_normal(12), tf.float32)
b = tf.constant(rng.standard_normal(12), tf.float32)
masked_rows_dense(x, mask)
sorted_unique(tf.constant(rng.integers(0, 10, 30), tf.int32))
concat_masks(a, b)
reversed_cumsum(a)
masked_softmax_loss(
    tf.constant(rng.standard_normal((8, 5)), tf.float32),
    tf.constant(rng.integers(0, 5, 8), tf.int32),
    mask,
)
where_scatter(x)
topk_of_mask(a)
loop_over_mask(a)
reshaped_mask(a)
