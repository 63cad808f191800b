#include "hlo/shape.h"

#include <gtest/gtest.h>

#include <vector>

namespace hlogym {
namespace {

using PT = PrimitiveType;

Shape WithLayout(Shape shape, std::vector<int64_t> minor_to_major, std::string details = "") {
  shape.set_layout(Layout{std::move(minor_to_major), std::move(details)});
  return shape;
}

TEST(Shape, ToStringArrays) {
  EXPECT_EQ(Shape(PT::kF32, {2, 3}).ToString(), "f32[2,3]");
  EXPECT_EQ(Shape::Scalar(PT::kPred).ToString(), "pred[]");
  EXPECT_EQ(Shape(PT::kBF16, {0}).ToString(), "bf16[0]");
  EXPECT_EQ(Shape(PT::kF8E4M3FN, {4}).ToString(), "f8e4m3fn[4]");
  EXPECT_EQ(Shape(PT::kS4, {8}).ToString(), "s4[8]");
  EXPECT_EQ(Shape::Token().ToString(), "token[]");
}

TEST(Shape, ToStringLayouts) {
  Shape shape(PT::kF32, {2, 3});
  shape.SetDefaultLayout();
  EXPECT_EQ(shape.ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(shape.ToString(/*print_layout=*/false), "f32[2,3]");
  EXPECT_EQ(WithLayout(Shape(PT::kF32, {2, 3}), {0, 1}).ToString(), "f32[2,3]{0,1}");
  EXPECT_EQ(WithLayout(Shape(PT::kF32, {8, 128}), {1, 0}, "T(8,128)").ToString(),
            "f32[8,128]{1,0:T(8,128)}");
  EXPECT_EQ(WithLayout(Shape(PT::kS4, {16}), {0}, "E(4)").ToString(), "s4[16]{0:E(4)}");
  // Scalars: the empty layout is not printed, but details are.
  Shape scalar = Shape::Scalar(PT::kF32);
  scalar.SetDefaultLayout();
  EXPECT_TRUE(scalar.has_layout());
  EXPECT_EQ(scalar.ToString(), "f32[]");
  EXPECT_EQ(WithLayout(Shape::Scalar(PT::kF32), {}, "S(1)").ToString(), "f32[]{:S(1)}");
}

TEST(Shape, ToStringDynamic) {
  Shape shape(PT::kF32, {2, 3, Shape::kUnboundedSize});
  shape.set_dynamic_dimension(1, true);
  shape.set_dynamic_dimension(2, true);
  EXPECT_EQ(shape.ToString(), "f32[2,<=3,?]");
  EXPECT_FALSE(shape.is_static());
  EXPECT_TRUE(shape.is_unbounded_dynamic());
  shape.set_dynamic_dimension(1, false);
  shape.set_dynamic_dimension(2, false);
  shape.mutable_dimensions()[2] = 4;
  EXPECT_TRUE(shape.is_static());
  EXPECT_EQ(shape, Shape(PT::kF32, {2, 3, 4}));  // no leftover dynamic bookkeeping
}

TEST(Shape, ToStringTuples) {
  Shape inner = Shape::Tuple({Shape::Scalar(PT::kS32), Shape::Token()});
  Shape shape = Shape::Tuple({WithLayout(Shape(PT::kF32, {2}), {0}), inner});
  EXPECT_EQ(shape.ToString(), "(f32[2]{0}, (s32[], token[]))");
  EXPECT_EQ(shape.ToString(false), "(f32[2], (s32[], token[]))");
  EXPECT_EQ(Shape::Tuple({}).ToString(), "()");
  EXPECT_EQ(shape.Subshape(std::vector<int64_t>{1, 0}), Shape::Scalar(PT::kS32));
  EXPECT_EQ(shape.tuple_shapes_size(), 2);
  shape.clear_layout();
  EXPECT_FALSE(shape.tuple_shapes(0).has_layout());
  shape.SetDefaultLayout();
  EXPECT_EQ(shape.tuple_shapes(0).layout()->minor_to_major, std::vector<int64_t>{0});
  EXPECT_FALSE(shape.has_layout());  // tuples themselves carry no layout
}

TEST(Shape, ElementCount) {
  EXPECT_EQ(Shape(PT::kF32, {2, 3}).ElementCount(), 6);
  EXPECT_EQ(Shape::Scalar(PT::kF32).ElementCount(), 1);
  EXPECT_EQ(Shape(PT::kF32, {0, 5}).ElementCount(), 0);
  Shape bounded(PT::kF32, {4, 5});
  bounded.set_dynamic_dimension(0, true);
  EXPECT_EQ(bounded.ElementCount(), 20);  // the bound counts
  Shape unbounded(PT::kF32, {Shape::kUnboundedSize, 5});
  EXPECT_EQ(unbounded.ElementCount(), 0);
}

TEST(Shape, ByteSizePacksSubByteTypes) {
  EXPECT_EQ(Shape(PT::kF32, {2, 3}).ByteSize(), 24);
  EXPECT_EQ(Shape(PT::kF64, {}).ByteSize(), 8);
  EXPECT_EQ(Shape(PT::kBF16, {3}).ByteSize(), 6);
  EXPECT_EQ(Shape(PT::kPred, {3}).ByteSize(), 3);
  EXPECT_EQ(Shape(PT::kS4, {3}).ByteSize(), 2);  // 12 bits
  EXPECT_EQ(Shape(PT::kS4, {4}).ByteSize(), 2);
  EXPECT_EQ(Shape(PT::kU1, {9}).ByteSize(), 2);
  EXPECT_EQ(Shape(PT::kU2, {4}).ByteSize(), 1);
  EXPECT_EQ(Shape(PT::kF4E2M1FN, {5}).ByteSize(), 3);
  EXPECT_EQ(Shape(PT::kF8E5M2, {5}).ByteSize(), 5);
  EXPECT_EQ(Shape(PT::kC64, {2}).ByteSize(), 16);
  EXPECT_EQ(Shape(PT::kC128, {}).ByteSize(), 16);
  EXPECT_EQ(Shape(PT::kS32, {0}).ByteSize(), 0);
  EXPECT_EQ(Shape::Token().ByteSize(), 0);
  EXPECT_EQ(Shape::Tuple({Shape(PT::kF32, {2}), Shape(PT::kS8, {3}), Shape::Token()}).ByteSize(),
            11);
}

TEST(Shape, Compatible) {
  Shape a(PT::kF32, {2, 3});
  EXPECT_TRUE(a.Compatible(WithLayout(Shape(PT::kF32, {2, 3}), {0, 1})));  // layout ignored
  EXPECT_FALSE(a.Compatible(Shape(PT::kF32, {3, 2})));
  EXPECT_FALSE(a.Compatible(Shape(PT::kS32, {2, 3})));
  EXPECT_FALSE(a.Compatible(Shape(PT::kF32, {2, 3, 1})));
  Shape dynamic = a;
  dynamic.set_dynamic_dimension(1, true);
  EXPECT_FALSE(a.Compatible(dynamic));
  EXPECT_TRUE(a.SameDimensions(Shape(PT::kS32, {2, 3})));
  EXPECT_FALSE(a.SameDimensions(Shape(PT::kS32, {3, 2})));

  Shape t1 = Shape::Tuple({a, Shape::Scalar(PT::kS32)});
  Shape t2 = Shape::Tuple({WithLayout(a, {1, 0}), Shape::Scalar(PT::kS32)});
  EXPECT_TRUE(t1.Compatible(t2));
  EXPECT_NE(t1, t2);  // operator== includes layouts
  EXPECT_FALSE(t1.Compatible(Shape::Tuple({a})));
  EXPECT_FALSE(t1.Compatible(Shape::Tuple({a, Shape::Scalar(PT::kU32)})));
  EXPECT_FALSE(t1.Compatible(a));
  EXPECT_TRUE(Shape::Token().Compatible(Shape::Token()));
}

TEST(Shape, EqualWithMissingLayoutsAsDefault) {
  const Shape::Equality xla = {.layouts = Shape::Layouts::kCompareMissingAsDefault};
  Shape plain(PT::kF32, {2, 3});
  EXPECT_TRUE(plain.Equal(plain, xla));
  EXPECT_TRUE(plain.Equal(WithLayout(plain, {1, 0}), xla));  // the default layout
  EXPECT_TRUE(WithLayout(plain, {1, 0}).Equal(plain, xla));
  EXPECT_FALSE(plain.Equal(WithLayout(plain, {0, 1}), xla));
  EXPECT_FALSE(WithLayout(plain, {0, 1}).Equal(plain, xla));
  EXPECT_FALSE(plain.Equal(WithLayout(plain, {1, 0}, "T(8,128)"), xla));  // tiled
  EXPECT_TRUE(WithLayout(plain, {0, 1}).Equal(WithLayout(plain, {0, 1}), xla));
  EXPECT_FALSE(plain.Equal(WithLayout(Shape(PT::kF32, {3, 2}), {1, 0}), xla));  // dimensions
  EXPECT_TRUE(Shape::Scalar(PT::kF32).Equal(WithLayout(Shape::Scalar(PT::kF32), {}), xla));
  EXPECT_FALSE(plain == WithLayout(plain, {1, 0}));  // exact equality still tells them apart
  EXPECT_TRUE(Shape::Tuple({plain, Shape::Scalar(PT::kS32)})
                  .Equal(Shape::Tuple({WithLayout(plain, {1, 0}), Shape::Scalar(PT::kS32)}), xla));
  EXPECT_FALSE(Shape::Tuple({plain}).Equal(Shape::Tuple({WithLayout(plain, {0, 1})}), xla));
}

TEST(Shape, Kinds) {
  EXPECT_TRUE(Shape::Scalar(PT::kF32).IsScalar());
  EXPECT_TRUE(Shape::Scalar(PT::kF32).IsArray());
  EXPECT_FALSE(Shape(PT::kF32, {1}).IsScalar());
  EXPECT_FALSE(Shape::Token().IsArray());
  EXPECT_TRUE(Shape::Token().IsToken());
  EXPECT_TRUE(Shape::Tuple({}).IsTuple());
  EXPECT_FALSE(Shape::Tuple({}).IsArray());
}

}  // namespace
}  // namespace hlogym
