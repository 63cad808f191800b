// Finding a module file by name, for every command that takes a FILE and for
// the gym's benchmarks. A name that is not an existing path is looked up as
//   <family>/<name>, corpus/<name> or <name>  in datasets/corpus/manifest.json
//                                             (the entry's "path" is relative
//                                             to datasets/corpus/), then
//   smoke/<name> or <name>                    as datasets/smoke/<name>.hlo
//                                             (.hlo.gz, .hlo.zst).
// The datasets/ folder is searched in $HLOGYM_ROOT/datasets, then in the
// current directory and each of its parents, then near the running code (see
// DataRoot), then in the source tree the library was built from. This lives in
// src/text so that the CLI and the gym share it without the text layer
// depending on the gym.
#ifndef HLOGYM_TEXT_MODULE_LOCATOR_H_
#define HLOGYM_TEXT_MODULE_LOCATOR_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hlogym {

// The folder whose datasets/ (corpus, smoke, policies) this build reads:
// $HLOGYM_ROOT when set; else the nearest one found from the running code (the
// executable, or the Python extension's shared object) upward, either as
// <dir>/datasets (a checkout, from its build/) or as <dir>/share/hlogym/datasets
// (an installed package: `pip install` puts the data under the environment's
// prefix, beside bin/ and lib/); else the source tree the library was built from.
std::string DataRoot();

// The existing datasets/ folders, in search order, without duplicates.
std::vector<std::string> DatasetsDirs();

// The file a corpus or smoke module name resolves to in one datasets folder
// (the lookups above, without the search), or a module of one of its dataset
// folders as "<dataset>/<name>" ("pytorch/NAME"); "" when there is none.
std::string FindModuleInDatasets(const std::string& datasets_dir, std::string_view name);

// The file of "<folder>/<name>" or "<folder>/<family>/<name>" where <folder>
// holds a manifest.json of the corpus's form (text/corpus.h) that lists the
// module: the one naming scheme for a dataset's modules, whether the corpus's,
// a shipped dataset's or one `hlogym harvest` wrote. "" when there is none.
std::string FindModuleInDatasetFolder(std::string_view spec);

// The file a module name resolves to, or NotFound naming `name`. Existing
// paths are returned unchanged.
absl::StatusOr<std::string> LocateModule(std::string_view name);

}  // namespace hlogym

#endif  // HLOGYM_TEXT_MODULE_LOCATOR_H_
