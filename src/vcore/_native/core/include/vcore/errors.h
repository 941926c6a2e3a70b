// Exceptions thrown by the core. Bindings translate them: NotFound -> KeyError, Invalid -> ValueError.
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

}  // namespace vcore
