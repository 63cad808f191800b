"""A single-shot object detector in TensorFlow 2 with Keras layers, compiled by XLA
(`tf.function(jit_compile=True)`): a small convolutional backbone with batch norm, box and class
heads on two feature maps, anchor decoding, and per-image non-max suppression
(`tf.image.non_max_suppression_padded`: sorting, top-k and a suppression loop); its training step
(smooth-L1 box loss and cross-entropy on anchors matched by IoU, SGD with momentum) and its
inference, f32 and f16 (Keras's mixed_float16). Run it under `hlogym harvest` in a venv with
datasets/corpus/requirements-tensorflow.txt (datasets/probes/generate.py does).
"""

import numpy as np
import tensorflow as tf

IMAGE, CLASSES, BATCH, MAX_BOXES = 64, 4, 2, 8
SCALES = ((16, 4), (8, 8))  # (feature map side, anchor side in cells of 4 pixels)


def anchors():
    """[A, 4] anchors (y0, x0, y1, x1) in [0, 1], one square per cell of each feature map."""
    boxes = []
    for side, size in SCALES:
        centers = (np.arange(side) + 0.5) / side
        half = size * 4 / IMAGE / 2
        for cy in centers:
            for cx in centers:
                boxes.append((cy - half, cx - half, cy + half, cx + half))
    return tf.constant(np.array(boxes, np.float32))


def detector():
    inputs = tf.keras.Input((IMAGE, IMAGE, 3))
    x = inputs
    features = []
    for width in (16, 32, 64):
        x = tf.keras.layers.Conv2D(width, 3, strides=2, padding="same", use_bias=False)(x)
        x = tf.keras.layers.BatchNormalization()(x)
        x = tf.keras.layers.ReLU()(x)
        if width > 16:
            features.append(x)
    boxes, logits = [], []
    for feature in features:
        boxes.append(
            tf.keras.layers.Reshape((-1, 4))(tf.keras.layers.Conv2D(4, 3, padding="same")(feature))
        )
        logits.append(
            tf.keras.layers.Reshape((-1, CLASSES + 1))(
                tf.keras.layers.Conv2D(CLASSES + 1, 3, padding="same", dtype="float32")(feature)
            )
        )
    box_out = tf.keras.layers.Concatenate(axis=1, dtype="float32")(boxes)
    logit_out = tf.keras.layers.Concatenate(axis=1, dtype="float32")(logits)
    return tf.keras.Model(inputs, [box_out, logit_out])


def decode(offsets, anchor):
    """Anchor-relative offsets (dy, dx, dh, dw) to corner boxes."""
    size = anchor[:, 2:] - anchor[:, :2]
    center = (anchor[:, 2:] + anchor[:, :2]) / 2 + offsets[..., :2] * size
    half = size * tf.exp(tf.clip_by_value(offsets[..., 2:], -4.0, 4.0)) / 2
    return tf.concat([center - half, center + half], axis=-1)


def iou(a, b):
    """[N, 4] x [M, 4] -> [N, M]."""
    top_left = tf.maximum(a[:, None, :2], b[None, :, :2])
    bottom_right = tf.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = tf.reduce_prod(tf.maximum(bottom_right - top_left, 0.0), axis=-1)
    area = lambda box: tf.reduce_prod(box[:, 2:] - box[:, :2], axis=-1)  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None, :] - inter + 1e-6)


def make_steps(model, anchor, optimizer):
    @tf.function(jit_compile=True)
    def infer(images):
        offsets, logits = model(images, training=False)
        boxes = decode(offsets, anchor)
        scores = tf.reduce_max(tf.nn.softmax(logits)[..., 1:], axis=-1)
        picked, _ = tf.image.non_max_suppression_padded(
            boxes,
            scores,
            MAX_BOXES,
            iou_threshold=0.5,
            score_threshold=0.05,
            pad_to_max_output_size=True,
        )
        return tf.gather(boxes, picked, batch_dims=1), tf.gather(scores, picked, batch_dims=1)

    @tf.function(jit_compile=True)
    def train_step(images, gt_boxes, gt_classes):
        with tf.GradientTape() as tape:
            offsets, logits = model(images, training=True)
            boxes = decode(offsets, anchor)
            overlap = tf.map_fn(lambda g: iou(anchor, g), gt_boxes)  # [B, A, G]
            best = tf.argmax(overlap, axis=-1)
            positive = tf.reduce_max(overlap, axis=-1) > 0.4
            target_box = tf.gather(gt_boxes, best, batch_dims=1)
            target_class = tf.where(positive, tf.gather(gt_classes, best, batch_dims=1) + 1, 0)
            diff = tf.abs(boxes - target_box)
            smooth_l1 = tf.where(diff < 1.0, 0.5 * diff * diff, diff - 0.5)
            box_loss = tf.reduce_sum(
                tf.reduce_sum(smooth_l1, -1) * tf.cast(positive, tf.float32)
            ) / tf.maximum(tf.reduce_sum(tf.cast(positive, tf.float32)), 1.0)
            class_loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(target_class, logits)
            )
            loss = box_loss + class_loss
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return infer, train_step


def main():
    rng = np.random.default_rng(0)
    images = tf.constant(rng.normal(size=(BATCH, IMAGE, IMAGE, 3)).astype(np.float32))
    corners = np.sort(rng.uniform(size=(BATCH, 3, 2, 2)), axis=2).reshape(BATCH, 3, 4)
    gt_boxes = tf.constant(corners[..., [0, 2, 1, 3]].astype(np.float32))
    gt_classes = tf.constant(rng.integers(0, CLASSES, size=(BATCH, 3)).astype(np.int32))
    for policy in ("float32", "mixed_float16"):
        tf.keras.mixed_precision.set_global_policy(policy)
        tf.keras.utils.set_random_seed(0)
        model = detector()
        optimizer = tf.keras.optimizers.SGD(0.01, momentum=0.9)
        if policy == "mixed_float16":
            optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
        infer, train_step = make_steps(model, anchors(), optimizer)
        train_step(images, gt_boxes, gt_classes)
        infer(images)


if __name__ == "__main__":
    main()
