// Exceptions thrown by the core. Bindings translate them: NotFound -> KeyError, Invalid -> ValueError,
// Stale -> vcore._native._core.StaleError.
#pragma once
#include <stdexcept>
#include <string>

namespace vcore {

struct NotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Invalid : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Input computed by the caller against state that has changed since (e.g. regexMatch results against another set
// of nodes): nothing was written; compute it again.
struct Stale : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace vcore
