"""Corpus families from the second frontend: TensorFlow (tensorflow-cpu), not JAX.

Each module is what a TensorFlow user's `tf.function(jit_compile=True)` hands to XLA, read with
`experimental_get_compiler_ir(*specs)(stage="hlo_serialized")`: TF's own lowering (tf2xla), whose
HLO looks unlike JAX's (resource variables as parameters, identity transposes and reshapes after
every MatMul, TF's op names, while loops from tf.while_loop, f16 through Keras's mixed_float16
policy):
  tf_mobilenetv2  keras.applications.MobileNetV2 on Keras 3's TensorFlow backend, inference
  tf_bert         a BERT-style encoder classifier of Keras layers (MultiHeadAttention,
                  LayerNormalization); training steps are tf.GradientTape + Keras AdamW
  tf_rnn          an LSTM or GRU text classifier of Keras layers (a while loop over time);
                  training steps with Keras SGD with momentum
  tf_dlrm         a DLRM-style recommender in plain TensorFlow (tf.Variable embedding tables,
                  tf.gather, pairwise dot interactions, MLPs); training steps apply sparse
                  gradients with assign_sub (scatters)
and, for the generated training set (generate.py --training), tf_mlp and tf_cnn: plain TensorFlow
(tf.Variable, tf.nn) with Adam's update written out as assign ops.

Run as a script by generate.py (TensorFlow gets a process of its own: Keras picks its backend once
per process, and TF carries its own XLA):
    python tf_models.py FAMILY CONFIG_JSON NAME > module.hlo
prints the module with its name set to NAME and source paths dropped from metadata, so the text
does not depend on where the generator's venv lives. Versions are pinned in
datasets/corpus/requirements-tensorflow.txt.
"""

from __future__ import annotations

import json
import os
import re
import sys

os.environ["KERAS_BACKEND"] = "tensorflow"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

POLICIES = {"f32": "float32", "bf16": "mixed_bfloat16", "f16": "mixed_float16"}


def keras_setup(cfg):
    import keras

    keras.utils.set_random_seed(0)
    keras.mixed_precision.set_global_policy(POLICIES[cfg["dtype"]])
    return keras


def mobilenetv2(cfg):
    import tensorflow as tf

    keras = keras_setup(cfg)
    model = keras.applications.MobileNetV2(
        weights=None,
        alpha=cfg["alpha"],
        classes=cfg["classes"],
        input_shape=(cfg["res"], cfg["res"], 3),
        classifier_activation=None,
    )

    def infer(images):
        return model(images, training=False)

    return infer, [tf.TensorSpec((cfg["batch"], cfg["res"], cfg["res"], 3), tf.float32)]


def bert_model(cfg):
    keras = keras_setup(cfg)
    L = keras.layers
    tokens = keras.Input((cfg["seq"],), dtype="int32", batch_size=cfg["batch"])
    x = L.Embedding(cfg["vocab"], cfg["d"])(tokens)
    x = x + L.Embedding(cfg["seq"], cfg["d"])(keras.ops.arange(cfg["seq"]))
    for _ in range(cfg["layers"]):
        a = L.MultiHeadAttention(cfg["heads"], cfg["d"] // cfg["heads"])(x, x)
        x = L.LayerNormalization(epsilon=1e-6)(x + a)
        f = L.Dense(4 * cfg["d"], activation="gelu")(x)
        x = L.LayerNormalization(epsilon=1e-6)(x + L.Dense(cfg["d"])(f))
    pooled = L.Dense(cfg["d"], activation="tanh")(x[:, 0])
    logits = L.Dense(cfg["classes"], dtype="float32")(pooled)
    return keras, keras.Model(tokens, logits)


def rnn_model(cfg):
    keras = keras_setup(cfg)
    L = keras.layers
    tokens = keras.Input((cfg["seq"],), dtype="int32", batch_size=cfg["batch"])
    x = L.Embedding(cfg["vocab"], cfg["embed"])(tokens)
    cell = L.LSTM if cfg["cell"] == "lstm" else L.GRU
    for i in range(cfg["layers"]):
        # use_cudnn=False: the generic loop, which is what jit_compile lowers on any device
        x = cell(cfg["hidden"], return_sequences=i + 1 < cfg["layers"], use_cudnn=False)(x)
    logits = L.Dense(cfg["classes"], dtype="float32")(x)
    return keras, keras.Model(tokens, logits)


def keras_step(keras, model, optimizer, cfg):
    """(function, specs) for inference or one training step of a Keras model on int32 tokens."""
    import tensorflow as tf

    tokens = tf.TensorSpec((cfg["batch"], cfg["seq"]), tf.int32)
    if cfg["mode"] == "infer":
        return (lambda t: model(t, training=False)), [tokens]
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def train(t, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(t, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return train, [tokens, tf.TensorSpec((cfg["batch"],), tf.int32)]


def dlrm(cfg):
    import tensorflow as tf

    tf.random.set_seed(0)
    dt = {"f32": tf.float32, "bf16": tf.bfloat16, "f16": tf.float16}[cfg["dtype"]]
    e, b, n_dense = cfg["emb"], cfg["batch"], 13

    def dense(shape):
        return tf.Variable(tf.random.normal(shape, stddev=0.1))

    tables = [dense((cfg["rows"], e)) for _ in range(cfg["tables"])]
    bottom = [
        (dense((i, o)), dense((o,))) for i, o in zip([n_dense] + cfg["mlp"], cfg["mlp"] + [e])
    ]
    n_feat = cfg["tables"] + 1
    n_pairs = n_feat * (n_feat - 1) // 2
    top = [
        (dense((i, o)), dense((o,))) for i, o in zip([e + n_pairs] + cfg["mlp"], cfg["mlp"] + [1])
    ]
    i, j = [list(v) for v in zip(*[(a, c) for a in range(n_feat) for c in range(a)])]

    def mlp(x, layers):
        for k, (w, bias) in enumerate(layers):
            x = tf.matmul(x, tf.cast(w, dt)) + tf.cast(bias, dt)
            if k + 1 < len(layers):
                x = tf.nn.relu(x)
        return x

    def forward(dense_x, sparse_ids):
        x = mlp(tf.cast(dense_x, dt), bottom)
        embs = [tf.cast(tf.gather(t, sparse_ids[:, k]), dt) for k, t in enumerate(tables)]
        feats = tf.stack([x] + embs, axis=1)  # [B, F, E]
        inter = tf.matmul(feats, feats, transpose_b=True)  # [B, F, F]
        flat = tf.reshape(inter, (b, n_feat * n_feat))
        pairs = tf.gather(flat, [a * n_feat + c for a, c in zip(i, j)], axis=1)
        return tf.cast(mlp(tf.concat([x, pairs], axis=1), top), tf.float32)[:, 0]

    specs = [tf.TensorSpec((b, n_dense), tf.float32), tf.TensorSpec((b, cfg["tables"]), tf.int32)]
    if cfg["mode"] == "infer":
        return forward, specs
    variables = tables + [v for layer in bottom + top for v in layer]

    def train(dense_x, sparse_ids, clicks):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(
                tf.nn.sigmoid_cross_entropy_with_logits(clicks, forward(dense_x, sparse_ids))
            )
        # embedding gradients arrive as IndexedSlices: assign_sub applies them as scatters
        for v, g in zip(variables, tape.gradient(loss, variables)):
            v.assign_sub(0.05 * g) if not isinstance(g, tf.IndexedSlices) else v.scatter_sub(
                tf.IndexedSlices(0.05 * g.values, g.indices, g.dense_shape)
            )
        return loss

    return train, specs + [tf.TensorSpec((b,), tf.float32)]


def plain_step(cfg, variables, forward, inputs):
    """(function, specs) for inference or one training step of a plain-TensorFlow model (no
    Keras: a held-out library) on float inputs: softmax cross-entropy, tf.GradientTape, and
    Adam's update written out with assign ops, as TF 1-style training code does."""
    import tensorflow as tf

    if cfg["mode"] == "infer":
        return forward, inputs
    slots = [(tf.Variable(tf.zeros_like(v)), tf.Variable(tf.zeros_like(v))) for v in variables]
    step = tf.Variable(0.0)

    def train(x, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels, forward(x))
            )
        step.assign_add(1.0)
        for v, g, (m, s) in zip(variables, tape.gradient(loss, variables), slots):
            m.assign(0.9 * m + 0.1 * g)
            s.assign(0.999 * s + 0.001 * tf.square(g))
            m_hat = m / (1 - tf.pow(0.9, step))
            s_hat = s / (1 - tf.pow(0.999, step))
            v.assign_sub(1e-3 * m_hat / (tf.sqrt(s_hat) + 1e-7))
        return loss

    return train, inputs + [tf.TensorSpec((cfg["batch"],), tf.int32)]


def plain_mlp(cfg):
    """For the generated training set: an MLP classifier of tf.Variables (tf.matmul, tf.nn.selu,
    dropout in training)."""
    import tensorflow as tf

    tf.random.set_seed(0)
    dt = {"f32": tf.float32, "bf16": tf.bfloat16, "f16": tf.float16}[cfg["dtype"]]
    sizes = [cfg["features"]] + [cfg["hidden"]] * cfg["layers"] + [cfg["classes"]]
    layers = [
        (tf.Variable(tf.random.normal((a, b), stddev=0.1)), tf.Variable(tf.zeros((b,))))
        for a, b in zip(sizes, sizes[1:])
    ]

    def forward(x):
        h = tf.cast(x, dt)
        for k, (w, b) in enumerate(layers):
            h = tf.matmul(h, tf.cast(w, dt)) + tf.cast(b, dt)
            if k + 1 < len(layers):
                h = tf.nn.selu(h)
        return tf.cast(h, tf.float32)

    inputs = [tf.TensorSpec((cfg["batch"], cfg["features"]), tf.float32)]
    return plain_step(cfg, [v for layer in layers for v in layer], forward, inputs)


def plain_cnn(cfg):
    """For the generated training set: a CNN of tf.Variables (tf.nn.conv2d, tf.nn.max_pool2d,
    tf.nn.a dense head)."""
    import tensorflow as tf

    tf.random.set_seed(0)
    dt = {"f32": tf.float32, "bf16": tf.bfloat16, "f16": tf.float16}[cfg["dtype"]]
    filters, channels = [], 3
    for width in cfg["widths"]:
        filters.append(tf.Variable(tf.random.normal((3, 3, channels, width), stddev=0.1)))
        channels = width
    side = cfg["res"] >> len(cfg["widths"])
    head = tf.Variable(tf.random.normal((side * side * channels, cfg["classes"]), stddev=0.1))

    def forward(x):
        h = tf.cast(x, dt)
        for f in filters:
            h = tf.nn.relu(tf.nn.conv2d(h, tf.cast(f, dt), 1, "SAME"))
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        flat = tf.reshape(h, (cfg["batch"], -1))
        return tf.cast(tf.matmul(flat, tf.cast(head, dt)), tf.float32)

    inputs = [tf.TensorSpec((cfg["batch"], cfg["res"], cfg["res"], 3), tf.float32)]
    return plain_step(cfg, filters + [head], forward, inputs)


def build(family, cfg):
    """(python function, [tf.TensorSpec]) for one configuration of a TensorFlow family."""
    if family == "tf_mlp":
        return plain_mlp(cfg)
    if family == "tf_cnn":
        return plain_cnn(cfg)
    if family == "tf_mobilenetv2":
        return mobilenetv2(cfg)
    if family in ("tf_bert", "tf_rnn"):
        keras, model = (bert_model if family == "tf_bert" else rnn_model)(cfg)
        optimizer = (
            keras.optimizers.AdamW(1e-3)
            if family == "tf_bert"
            else keras.optimizers.SGD(0.01, momentum=0.9)
        )
        return keras_step(keras, model, optimizer, cfg)
    if family == "tf_dlrm":
        return dlrm(cfg)
    raise KeyError(family)


_SOURCE = re.compile(r'\s*source_file="[^"]*"\s*source_line=\d+')


def hlo_text(name, family, cfg):
    """The pre-optimization HLO TF hands to XLA, named `name`, without source paths.

    TF's printed stage ("hlo") elides large constants as {...}, which would lose e.g. the DLRM's
    pair indices; the serialized module is printed here in full by the pinned jaxlib's printer
    (XLA's own)."""
    import tensorflow as tf
    from jaxlib import _hlo

    fn, specs = build(family, cfg)
    proto = tf.function(fn, jit_compile=True).experimental_get_compiler_ir(*specs)(
        stage="hlo_serialized"
    )
    text = _hlo.XlaComputation(proto).as_hlo_text(print_large_constants=True)
    old = re.match(r"HloModule (\S+?),", text).group(1)
    # the entry computation shares TF's generated name (a_inference_<fn>_<counter>__.N)
    text = text.replace(f"ENTRY {old} ", f"ENTRY {name} ").replace(
        f"HloModule {old},", f"HloModule {name},"
    )
    return _SOURCE.sub("", text)


if __name__ == "__main__":
    family, config, name = sys.argv[1:4]
    sys.stdout.write(hlo_text(name, family, json.loads(config)))
