// String interning: labels, taints and resource names become small integers so selectors are integer tests.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace vcore {

class Interner {
 public:
  int32_t intern(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<int32_t>(names_.size());
    ids_.emplace(s, id);
    names_.push_back(s);
    return id;
  }
  int32_t find(const std::string& s) const {
    auto it = ids_.find(s);
    return it == ids_.end() ? -1 : it->second;
  }
  const std::string& name(int32_t id) const { return names_.at(static_cast<size_t>(id)); }
  size_t size() const { return names_.size(); }

 private:
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::string> names_;
};

}  // namespace vcore
