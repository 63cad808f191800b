// The data-parallel half of spmd-partitioning (spmd_partitioner.h): programs
// whose shardings XLA's partitioner propagates itself (jax.jit with sharded
// inputs, PyTorch/XLA's SPMD), where every value is whole on every partition
// or split evenly along one dimension over all of them. A reduction (or a dot)
// over the split dimension leaves a partial result on each partition, which
// an all-reduce right after it completes, with a reducer of its own; a whole
// broadcast or iota that a split operation reads is made split where it is
// computed. A whole value (a parameter included) that a split operation
// reads is sliced at the partition's offset, or split back to where it enters
// where XLA's propagation splits it; a split value that must be whole (a
// batch norm's operand, a reshape merging the split dimension, an output
// returned whole) is gathered; a parameter with no sharding that XLA may
// shard enters split where the program then partitions; a scatter-add into
// zeros from split indices and updates (an embedding's gradient) is
// completed by an all-reduce; a gather of one index along a split dimension
// (integer labels over a split vocabulary, a vocabulary-parallel embedding)
// gathers from each partition's part, the indices outside it masked, and an
// all-reduce sums the parts, its gradient scattering into each part at the
// index less the part's offset; an optimization barrier (jax.checkpoint's)
// passes its tuple's elements on as they are placed; a while loop (a scan, a
// solver's steps) holds each element of its state as its body writes it back,
// split or whole, and runs its body per partition. Weights split by columns or
// rows with the activations whole (tensor parallelism) follow from the same
// rules. Where values split along different dimensions meet (FSDP: weights
// split along the batch's mesh axis), one keeps its split and the others are
// gathered (a weight for its dot, a bias for its broadcast) or moved there with
// an all-to-all, as XLA's partitioner reshards after Shardy's propagation;
// where Shardy's choice of which keeps it is inferred (DataParallelInferences),
// XLA's may differ. A value a loop's body needs whole is gathered there, a
// partial one (a scanned layer's weight gradient) summed and sliced again
// there, a product written back to a loop's state (a scan's carry, its weight
// gradients) takes the split the loop holds it with, keeping an operand's or
// moving the one split along what it contracts there, and a value split
// otherwise than what it meets is moved there by an all-to-all, as in the
// entry; slicing anything else again inside a loop is not modelled. On a mesh
// of several axes (Shardy's `xla.sdy.meshes`: data beside tensor parallelism),
// each value split along at most one dimension per axis, the module is split
// along each axis in turn, collectives over that axis's groups of partitions.
#ifndef HLOGYM_PASSES_SHARDING_SPMD_DATA_PARALLEL_H_
#define HLOGYM_PASSES_SHARDING_SPMD_DATA_PARALLEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/module.h"

namespace hlogym {

// OK where the module (compiled for several partitions) is data-parallel as
// above; otherwise the first entry instruction that is not, and why.
absl::Status CheckDataParallelPartitioning(const Module& module);

// Splits such a module per partition; false (unchanged) for any other.
absl::StatusOr<bool> PartitionDataParallel(Module& module);

// The part of each entry parameter, then of each array leaf of the result,
// that each partition holds once PartitionDataParallel splits the module:
// tile_index[leaf][partition][dimension], the index of the partition's
// tile along the dimension (0 where the dimension is whole).
struct DataParallelTiles {
  std::vector<std::vector<std::vector<int64_t>>> tile_index;
};
absl::StatusOr<DataParallelTiles> TilesOfDataParallelSplit(const Module& module);

// For such a module, where its split follows hlogym's model of a choice
// Shardy's propagation makes (the first such instruction, and how many more);
// empty where none does.
std::string DataParallelInferences(const Module& module);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SHARDING_SPMD_DATA_PARALLEL_H_
