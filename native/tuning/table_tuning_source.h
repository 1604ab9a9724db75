// TableTuningSource: the profile-backed TuningSource. It holds, per schema key, values
// each tagged with the precedence tier it came from (ValueSource); Add keeps the value of
// the highest tier, Resolve starts from the portable defaults and applies the table.
// Which tier a profile belongs to (exact machine, same microarchitecture, same ISA level)
// is decided by whoever reads profiles (onnx_light.kernel_tuning); this class only
// enforces precedence and validates values against the schemas.
// Fill it (Add) before handing it to sessions; Resolve may then be called concurrently.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "native/tuning/schema.h"

namespace onnx_light {

class TableTuningSource : public TuningSource {
 public:
  struct Entry {
    ParamValue value;
    ValueSource source = ValueSource::kPortableDefault;
  };

  // Records `value` for (schema key, parameter) from `source`, checked against the
  // registered schema: an unknown key or parameter, a wrong type or an out-of-bounds value
  // is InvalidArgument. A value from a lower tier than the one already held is ignored
  // (Ok: it is simply outranked).
  Status Add(const std::string& schema_key, const std::string& param, ParamValue value, ValueSource source);

  // Defaults of `schema` overlaid with this table's values for its key. A value that does
  // not fit the schema handed in (another schema object under the same key) is skipped
  // and reported by rejected().
  ResolvedTuning Resolve(std::shared_ptr<const KernelTuningSchema> schema) const override;

  // Held entries, by schema key then parameter.
  const std::map<std::string, std::map<std::string, Entry>>& entries() const { return entries_; }
  // Messages about values Resolve could not apply.
  std::vector<std::string> rejected() const;

 private:
  std::map<std::string, std::map<std::string, Entry>> entries_;
  mutable std::mutex rejected_mutex_;
  mutable std::vector<std::string> rejected_;
};

}  // namespace onnx_light
