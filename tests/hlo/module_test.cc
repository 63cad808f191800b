// The IR's edge bookkeeping, post order, naming and cloning, built by hand
// (no parser), so these tests pin down src/hlo alone.
#include "hlo/module.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace hlogym {
namespace {

const Shape kVec(PrimitiveType::kF32, {4});

std::unique_ptr<Instruction> Parameter(int64_t number, std::string name) {
  auto p = std::make_unique<Instruction>(Opcode::kParameter, kVec, std::move(name));
  p->mutable_attrs().parameter_number = number;
  return p;
}

std::unique_ptr<Instruction> Binary(Opcode opcode, Instruction* a, Instruction* b,
                                    std::string name = "") {
  auto op = std::make_unique<Instruction>(opcode, kVec, std::move(name));
  op->AppendOperand(a);
  op->AppendOperand(b);
  return op;
}

// main(a, b) = (a + b) * b, built in a module.
struct Fixture {
  std::unique_ptr<Module> module = std::make_unique<Module>("m");
  Computation* main = nullptr;
  Instruction *a = nullptr, *b = nullptr, *sum = nullptr, *product = nullptr;

  Fixture() {
    main = module->AddComputation(std::make_unique<Computation>("main"));
    module->set_entry_computation(main);
    a = main->AddInstruction(Parameter(0, "a"));
    b = main->AddInstruction(Parameter(1, "b"));
    sum = main->AddInstruction(Binary(Opcode::kAdd, a, b, "sum"));
    product = main->AddInstruction(Binary(Opcode::kMultiply, sum, b, "product"));
    main->set_root_instruction(product);
  }
};

TEST(InstructionTest, UsersAreListedOncePerUser) {
  Fixture f;
  auto square = Binary(Opcode::kMultiply, f.a, f.a, "square");
  Instruction* sq = f.main->AddInstruction(std::move(square));
  EXPECT_EQ(f.a->users().size(), 2u);  // sum and square, square once
  EXPECT_EQ(sq->operand_count(), 2);
  sq->ReplaceOperandWith(0, f.b);
  // square still uses a through operand 1.
  EXPECT_NE(std::find(f.a->users().begin(), f.a->users().end(), sq), f.a->users().end());
  sq->ReplaceOperandWith(1, f.b);
  EXPECT_EQ(std::find(f.a->users().begin(), f.a->users().end(), sq), f.a->users().end());
}

TEST(InstructionTest, ReplaceAllUsesWithMovesUsersAndRoot) {
  Fixture f;
  auto negate = std::make_unique<Instruction>(Opcode::kNegate, kVec, "neg");
  negate->AppendOperand(f.product);
  Instruction* neg = f.main->AddInstruction(std::move(negate));
  ASSERT_TRUE(f.product->ReplaceAllUsesWith(neg).ok());
  // neg itself keeps product as operand; product is no longer the root.
  EXPECT_EQ(neg->operand(0), f.product);
  EXPECT_EQ(f.main->root_instruction(), neg);
  ASSERT_TRUE(f.b->ReplaceAllUsesWith(f.a).ok());
  EXPECT_EQ(f.sum->operand(1), f.a);
  EXPECT_EQ(f.product->operand(1), f.a);
  EXPECT_EQ(f.b->user_count(), 0);
}

TEST(ComputationTest, RemoveInstructionRefusesUsedOrRoot) {
  Fixture f;
  EXPECT_FALSE(f.main->RemoveInstruction(f.sum).ok());
  EXPECT_FALSE(f.main->RemoveInstruction(f.product).ok());
  auto dead = Binary(Opcode::kSubtract, f.a, f.b, "dead");
  Instruction* d = f.main->AddInstruction(std::move(dead));
  EXPECT_EQ(f.main->instruction_count(), 5);
  ASSERT_TRUE(f.main->RemoveInstruction(d).ok());
  EXPECT_EQ(f.main->instruction_count(), 4);
  EXPECT_EQ(f.a->user_count(), 1);
}

TEST(ComputationTest, RemoveAndUnusedOperandsKeepsParameters) {
  Fixture f;
  auto n1 = std::make_unique<Instruction>(Opcode::kNegate, kVec, "n1");
  n1->AppendOperand(f.a);
  Instruction* first = f.main->AddInstruction(std::move(n1));
  auto n2 = std::make_unique<Instruction>(Opcode::kNegate, kVec, "n2");
  n2->AppendOperand(first);
  Instruction* second = f.main->AddInstruction(std::move(n2));
  ASSERT_TRUE(f.main->RemoveInstructionAndUnusedOperands(second).ok());
  EXPECT_EQ(f.main->instruction_count(), 4);  // n1 and n2 gone, a stays
  EXPECT_EQ(f.main->num_parameters(), 2);
}

TEST(ComputationTest, PostOrderIsXlasWalkFromTheInstructionsWithoutUsers) {
  Fixture f;
  // An instruction appended last but used by an earlier one.
  auto late = std::make_unique<Instruction>(Opcode::kNegate, kVec, "late");
  late->AppendOperand(f.a);
  Instruction* l = f.main->AddInstruction(std::move(late));
  f.sum->ReplaceOperandWith(1, l);
  std::vector<Instruction*> order = f.main->MakeInstructionPostOrder();
  ASSERT_EQ(order.size(), 5u);
  std::vector<std::string> names;
  for (Instruction* i : order) names.push_back(i->name());
  // XLA's order: a walk from product, the one instruction without users,
  // each instruction's operands first and in order. b, listed second, comes
  // after sum, whose operands (a, late) come before it.
  EXPECT_EQ(names, (std::vector<std::string>{"a", "late", "sum", "b", "product"}));
  // A second instruction without users, listed after the root: its walk
  // comes second and emits only what the first did not.
  auto dead = std::make_unique<Instruction>(Opcode::kNegate, kVec, "dead");
  dead->AppendOperand(f.b);
  f.main->AddInstruction(std::move(dead));
  names.clear();
  for (Instruction* i : f.main->MakeInstructionPostOrder()) names.push_back(i->name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "late", "sum", "b", "product", "dead"}));
}

TEST(ComputationTest, PostOrderRespectsControlEdges) {
  Fixture f;
  f.product->AddControlDependencyTo(f.a);  // odd, but must order product first
  std::vector<Instruction*> order = f.main->MakeInstructionPostOrder();
  auto position = [&](Instruction* i) {
    return std::find(order.begin(), order.end(), i) - order.begin();
  };
  // a depends (by control) on product which depends on a: a cycle. The order
  // still lists every instruction exactly once.
  EXPECT_EQ(order.size(), 4u);
  f.product->RemoveControlDependencyTo(f.a);
  f.sum->AddControlDependencyTo(f.b);
  order = f.main->MakeInstructionPostOrder();
  EXPECT_LT(position(f.sum), position(f.b));
}

TEST(ModuleTest, UniqueNamesContinueNumbering) {
  Module module("m");
  EXPECT_EQ(module.UniqueName("add"), "add");
  EXPECT_EQ(module.UniqueName("add"), "add.1");
  module.ReserveName("mul.7");
  EXPECT_EQ(module.UniqueName("mul.7"), "mul.8");
  EXPECT_EQ(module.UniqueName("add.1"), "add.2");
}

TEST(ModuleTest, InstructionCountCountsEveryComputation) {
  Fixture f;
  auto helper = std::make_unique<Computation>("helper");
  helper->AddInstruction(Parameter(0, "x"));
  Computation* h = f.module->AddComputation(std::move(helper));
  h->set_root_instruction(h->parameter_instruction(0));
  EXPECT_EQ(f.module->instruction_count(), 5);
  EXPECT_EQ(f.module->computation_count(), 2);
  // Unused computations are not in the post order from the entry.
  EXPECT_EQ(f.module->MakeComputationPostOrder().size(), 1u);
  EXPECT_TRUE(f.module->RemoveComputation(h).ok());
  EXPECT_FALSE(f.module->RemoveComputation(f.main).ok());
}

TEST(ComputationTest, OpcodeCountsFollowAddAndRemove) {
  Fixture f;
  EXPECT_EQ(f.main->opcode_count(Opcode::kParameter), 2);
  EXPECT_EQ(f.main->opcode_count(Opcode::kMultiply), 1);
  EXPECT_EQ(f.main->opcode_count(Opcode::kSubtract), 0);
  Instruction* difference = f.main->AddInstruction(Binary(Opcode::kSubtract, f.a, f.b));
  EXPECT_EQ(f.main->opcode_count(Opcode::kSubtract), 1);
  ASSERT_TRUE(f.main->RemoveInstruction(difference).ok());
  EXPECT_EQ(f.main->opcode_count(Opcode::kSubtract), 0);
  // Replacing product by a subtract: one multiply fewer, one subtract more.
  Instruction* replacement = f.main->AddInstruction(Binary(Opcode::kSubtract, f.sum, f.b));
  ASSERT_TRUE(f.main->ReplaceInstruction(f.product, replacement).ok());
  EXPECT_EQ(f.main->opcode_count(Opcode::kMultiply), 0);
  EXPECT_EQ(f.main->opcode_count(Opcode::kSubtract), 1);
  // A clone counts the same.
  std::unique_ptr<Module> clone = f.module->Clone();
  EXPECT_EQ(clone->entry_computation()->opcode_count(Opcode::kSubtract), 1);
  EXPECT_EQ(clone->entry_computation()->opcode_count(Opcode::kAdd), 1);
}

// A computation returning its one parameter, added to `module`.
Computation* AddIdentity(Module& module, const std::string& name) {
  auto computation = std::make_unique<Computation>(name);
  Instruction* x = computation->AddInstruction(Parameter(0, name + ".x"));
  computation->set_root_instruction(x);
  return module.AddComputation(std::move(computation));
}

// CallerCount keeps its counts between edits: every edit that adds or drops a
// call must invalidate them.
TEST(ModuleTest, CallerCountFollowsEveryEditOfTheCalls) {
  Fixture f;
  Computation* outer = AddIdentity(*f.module, "outer");
  Computation* inner = AddIdentity(*f.module, "inner");
  EXPECT_EQ(f.module->CallerCount(inner), 0);
  // A call added to an instruction already in the module.
  outer->root_instruction()->mutable_called_computations().push_back(inner);
  EXPECT_EQ(f.module->CallerCount(inner), 1);
  // An instruction that calls it twice counts once; a new one counts again.
  f.sum->mutable_called_computations() = {inner, inner};
  EXPECT_EQ(f.module->CallerCount(inner), 2);
  auto caller = std::make_unique<Instruction>(Opcode::kCall, kVec, "caller");
  caller->AppendOperand(f.a);
  caller->mutable_called_computations().push_back(inner);
  Instruction* added = f.main->AddInstruction(std::move(caller));
  EXPECT_EQ(f.module->CallerCount(inner), 3);
  // Removing the instruction, then the calling computation, drops their calls.
  ASSERT_TRUE(f.main->RemoveInstruction(added).ok());
  EXPECT_EQ(f.module->CallerCount(inner), 2);
  f.sum->mutable_called_computations().clear();
  EXPECT_EQ(f.module->CallerCount(inner), 1);
  ASSERT_TRUE(f.module->RemoveComputation(outer).ok());
  EXPECT_EQ(f.module->CallerCount(inner), 0);
  EXPECT_EQ(f.module->CallerCount(f.main), 0);
}

TEST(ModuleTest, RemoveComputationsRemovesASetThatOnlyCallsItself) {
  Fixture f;
  Computation* outer = AddIdentity(*f.module, "outer");
  Computation* inner = AddIdentity(*f.module, "inner");
  outer->root_instruction()->mutable_called_computations().push_back(inner);
  // inner alone cannot go: outer, outside the set, calls it.
  EXPECT_FALSE(f.module->RemoveComputations({inner}).ok());
  EXPECT_EQ(f.module->computation_count(), 3);
  EXPECT_FALSE(f.module->RemoveComputations({f.main}).ok());  // the entry
  EXPECT_TRUE(f.module->RemoveComputations({outer, inner}).ok());
  EXPECT_EQ(f.module->computation_count(), 1);
  EXPECT_EQ(f.module->computations().front().get(), f.main);
}

TEST(ModuleTest, CloneIsDeepAndIndependent) {
  Fixture f;
  auto reducer = std::make_unique<Computation>("reducer");
  Instruction* x = reducer->AddInstruction(
      std::make_unique<Instruction>(Opcode::kParameter, Shape::Scalar(PrimitiveType::kF32), "x"));
  auto y_owned =
      std::make_unique<Instruction>(Opcode::kParameter, Shape::Scalar(PrimitiveType::kF32), "y");
  y_owned->mutable_attrs().parameter_number = 1;
  Instruction* y = reducer->AddInstruction(std::move(y_owned));
  auto add = std::make_unique<Instruction>(Opcode::kAdd, Shape::Scalar(PrimitiveType::kF32), "r");
  add->AppendOperand(x);
  add->AppendOperand(y);
  reducer->set_root_instruction(reducer->AddInstruction(std::move(add)));
  Computation* r = f.module->AddComputation(std::move(reducer));
  f.product->mutable_called_computations().push_back(r);  // any callee will do here
  f.sum->AddControlDependencyTo(f.b);
  f.product->mutable_attrs().SetRaw("metadata", "{op_name=\"x\"}");

  std::unique_ptr<Module> clone = f.module->Clone();
  ASSERT_EQ(clone->computation_count(), 2);
  Computation* main = clone->entry_computation();
  ASSERT_NE(main, nullptr);
  EXPECT_NE(main, f.main);
  EXPECT_EQ(main->name(), "main");
  Instruction* root = main->root_instruction();
  EXPECT_EQ(root->name(), "product");
  EXPECT_NE(root, f.product);
  EXPECT_EQ(root->operand(0)->name(), "sum");
  EXPECT_EQ(root->operand(0)->parent(), main);
  EXPECT_EQ(root->called_computations()[0], clone->FindComputation("reducer"));
  EXPECT_EQ(root->attrs().FindRaw("metadata")->value, "{op_name=\"x\"}");
  EXPECT_EQ(root->unique_id(), f.product->unique_id());
  EXPECT_EQ(root->operand(0)->control_successors().size(), 1u);
  EXPECT_EQ(main->num_parameters(), 2);
  // Editing the clone leaves the original alone.
  ASSERT_TRUE(
      main->parameter_instruction(1)->ReplaceAllUsesWith(main->parameter_instruction(0)).ok());
  EXPECT_EQ(f.sum->operand(1), f.b);
  EXPECT_EQ(clone->UniqueName("sum"), "sum.1");
}

// Clones share shapes, attributes and the module header copy-on-write:
// writing through either side must leave the other as it was.
TEST(ModuleTest, CloneSharesShapesAndAttributesCopyOnWrite) {
  Fixture f;
  f.product->mutable_attrs().SetRaw("backend_config", "{}");
  f.module->mutable_raw_attributes().push_back({"is_scheduled", "true"});
  std::unique_ptr<Module> clone = f.module->Clone();
  Instruction* product = clone->entry_computation()->root_instruction();
  EXPECT_EQ(&product->shape(), &f.product->shape()) << "shared, not copied";
  EXPECT_EQ(&product->attrs(), &f.product->attrs());
  EXPECT_EQ(&clone->raw_attributes(), &f.module->raw_attributes());
  std::unique_ptr<Instruction> twin = f.sum->CloneWithNewOperands({f.a, f.b}, "twin");
  EXPECT_TRUE(f.sum->Identical(*twin));
  twin->DetachOperands();  // never added: a and b must not keep it as a user

  product->mutable_shape().set_element_type(PrimitiveType::kF16);
  product->mutable_attrs().SetRaw("backend_config", "{\"x\":1}");
  clone->mutable_raw_attributes().clear();
  EXPECT_EQ(product->shape().element_type(), PrimitiveType::kF16);
  EXPECT_EQ(f.product->shape().element_type(), PrimitiveType::kF32);
  EXPECT_EQ(f.product->attrs().FindRaw("backend_config")->value, "{}");
  EXPECT_EQ(f.module->raw_attributes().size(), 1u);

  // The original's writes do not reach a clone either, and set_shape on an
  // unshared instruction keeps writing in place.
  std::unique_ptr<Module> second = f.module->Clone();
  Instruction* sum = second->entry_computation()->root_instruction()->operand(0);
  f.sum->set_shape(Shape(PrimitiveType::kS32, {4}));
  f.sum->mutable_attrs().dimensions = {0};
  EXPECT_EQ(sum->shape().element_type(), PrimitiveType::kF32);
  EXPECT_TRUE(sum->attrs().dimensions.empty());
  const Shape& own = f.sum->shape();
  f.sum->set_shape(Shape(PrimitiveType::kU8, {4}));
  EXPECT_EQ(&own, &f.sum->shape());

  // New instructions start from shared default attributes.
  Instruction* fresh = f.main->AddInstruction(Binary(Opcode::kAdd, f.a, f.b));
  fresh->mutable_attrs().tuple_index = 3;
  EXPECT_EQ(f.main->AddInstruction(Binary(Opcode::kAdd, f.a, f.b))->attrs().tuple_index, 0);
}

TEST(InstructionTest, IdenticalComparesAttributesAndOperands) {
  Fixture f;
  Instruction* s2 = f.main->AddInstruction(Binary(Opcode::kAdd, f.a, f.b, "sum2"));
  EXPECT_TRUE(f.sum->Identical(*s2));
  s2->mutable_attrs().SetRaw("metadata", "{op_name=\"other\"}");
  EXPECT_TRUE(f.sum->Identical(*s2)) << "raw attributes do not count";
  Instruction* s3 = f.main->AddInstruction(Binary(Opcode::kAdd, f.b, f.a, "sum3"));
  EXPECT_FALSE(f.sum->Identical(*s3)) << "operand order counts";
  s2->mutable_attrs().dimensions = {0};
  EXPECT_FALSE(f.sum->Identical(*s2));
}

// Every mutator a pass can reach stamps what it changed with a later tick of the module's clock
// (passes/change_tracking.h skips what has no later stamp than its last run).
TEST(ChangeClockTest, EveryMutatorStampsWhatItChanged) {
  Fixture f;
  uint64_t before = f.module->change_clock();
  auto stamped_after = [&](const Instruction* instruction) {
    return instruction->changed_at() > before;
  };
  auto step = [&](auto mutate, std::vector<const Instruction*> changed) {
    before = f.module->change_clock();
    mutate();
    for (const Instruction* instruction : changed) {
      EXPECT_TRUE(stamped_after(instruction)) << instruction->name();
    }
    EXPECT_GT(f.main->changed_at(), before);
  };
  Instruction* neg = nullptr;
  step(
      [&] {
        auto negate = std::make_unique<Instruction>(Opcode::kNegate, kVec, "neg");
        negate->AppendOperand(f.a);
        neg = f.main->AddInstruction(std::move(negate));
      },
      {});
  EXPECT_TRUE(stamped_after(neg));
  EXPECT_TRUE(stamped_after(f.a));  // a gained a user
  step([&] { f.sum->ReplaceOperandWith(0, neg); }, {f.sum, f.a, neg});
  step([&] { f.sum->ReplaceUsesOfOperand(neg, f.a); }, {f.sum, f.a, neg});
  step([&] { f.product->mutable_shape(); }, {f.product});
  step([&] { f.product->set_shape(kVec); }, {f.product});
  step([&] { f.product->mutable_attrs(); }, {f.product});
  step([&] { f.product->mutable_called_computations(); }, {f.product});
  step([&] { f.a->AddControlDependencyTo(f.b); }, {f.a, f.b});
  step([&] { f.a->RemoveControlDependencyTo(f.b); }, {f.a, f.b});
  step([&] { f.a->AddControlDependencyTo(f.b); }, {});
  step([&] { f.b->DropAllControlDeps(); }, {f.a, f.b});
  step([&] { f.main->set_root_instruction(f.sum); }, {f.sum, f.product});
  step([&] { ASSERT_TRUE(f.sum->ReplaceAllUsesWith(neg).ok()); }, {f.product, neg, f.sum});
  step([&] { ASSERT_TRUE(f.main->RemoveInstruction(f.sum).ok()); }, {f.a, f.b});
  step([&] { f.main->mutable_raw_attributes(); }, {});
  // Reading changes nothing.
  before = f.module->change_clock();
  (void)f.product->shape();
  (void)f.product->attrs();
  (void)f.main->Callees();
  EXPECT_EQ(f.module->change_clock(), before);
  // The entry and the header have a stamp of their own.
  before = f.module->change_clock();
  f.module->mutable_raw_attributes();
  EXPECT_GT(f.module->header_changed_at(), before);
}

TEST(ChangeClockTest, ClonesKeepStampsRecordsAndCallees) {
  Fixture f;
  auto body = std::make_unique<Computation>("body");
  body->AddInstruction(Parameter(0, "x"));
  body->set_root_instruction(body->parameters()[0]);
  Computation* callee = f.module->AddComputation(std::move(body));
  auto call = std::make_unique<Instruction>(Opcode::kCall, kVec, "call");
  call->AppendOperand(f.product);
  call->mutable_called_computations().push_back(callee);
  Instruction* called = f.main->AddInstruction(std::move(call));
  f.main->set_root_instruction(called);
  ASSERT_EQ(f.main->Callees(), std::vector<Computation*>{callee});
  f.module->RecordPassRun("algsimp:x", 7);

  std::unique_ptr<Module> clone = f.module->Clone();
  EXPECT_EQ(clone->change_clock(), f.module->change_clock());
  EXPECT_EQ(clone->PassRunStart("algsimp:x"), std::optional<uint64_t>(7));
  EXPECT_FALSE(clone->PassRunStart("cse").has_value());
  Computation* main_copy = clone->entry_computation();
  EXPECT_EQ(main_copy->changed_at(), f.main->changed_at());
  EXPECT_EQ(main_copy->root_instruction()->changed_at(), called->changed_at());
  ASSERT_EQ(main_copy->Callees().size(), 1u);
  EXPECT_EQ(main_copy->Callees()[0], clone->FindComputation("body"));
  clone->ForgetPassRuns();
  EXPECT_FALSE(clone->has_pass_runs());
  EXPECT_TRUE(f.module->has_pass_runs());
}

}  // namespace
}  // namespace hlogym
