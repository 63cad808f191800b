// The attributes of a `scan` instruction (kept raw by the parser), read and
// checked in one place for the passes and the evaluator that handle scans.
//
// A scan has operands (inputs..., inits...): the last `num_carries` operands
// seed the carries, the others are sliced along `dimensions={d}` (the scan
// dimension). Its to_apply takes (one slice of each input without the scan
// dimension..., carries...) and returns (outputs..., new carries...) as a
// tuple, or the single value when it returns one. The scan returns (each
// output stacked along dimension d..., final carries...), again untupled
// when there is one value. is_reverse=true walks the scan dimension from
// its end; is_associative=true|false is a hint (absent = unknown).
#ifndef HLOGYM_HLO_SCAN_ATTRIBUTES_H_
#define HLOGYM_HLO_SCAN_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/instruction.h"

namespace hlogym {

struct ScanAttributes {
  int64_t scan_dimension = 0;
  int64_t num_carries = 0;
  bool is_reverse = false;
  std::optional<bool> is_associative;  // nullopt when not written
  int64_t num_inputs = 0;
  int64_t num_outputs = 0;
  int64_t length = 0;  // size of the scan dimension
  // The result's values (outputs then carries) and the to_apply's parameter
  // and result shapes the operands imply.
  std::vector<Shape> result_shapes;
};

// Reads and checks the scan's attributes against its operands, result and
// to_apply; the error names the instruction. Scans without inputs (whose
// length XLA takes from another attribute) are reported as unsupported.
absl::StatusOr<ScanAttributes> ReadScanAttributes(const Instruction& scan);

}  // namespace hlogym

#endif  // HLOGYM_HLO_SCAN_ATTRIBUTES_H_
