// Host ports in use per node and the images nodes report (node_extras.h).
#include "vcore/node_extras.h"

#include <algorithm>

namespace vcore {

void HostPortTable::apply(int32_t slot, const std::vector<HostPort>& ports, int sign) {
  if (ports.empty()) return;
  auto& used = used_[slot];
  for (const HostPort& p : ports) {
    auto it = std::find_if(used.begin(), used.end(), [&](const auto& e) { return e.first == p; });
    if (it == used.end()) it = used.insert(used.end(), {p, 0});
    if ((it->second += sign) <= 0) used.erase(it);
  }
  if (used.empty()) used_.erase(slot);
}

bool HostPortTable::conflicts(int32_t slot, const std::vector<HostPort>& wanted, int32_t any_ip) const {
  const auto it = used_.find(slot);
  if (it == used_.end()) return false;
  for (const HostPort& w : wanted)
    for (const auto& [u, holders] : it->second)
      if (u.port == w.port && u.protocol == w.protocol && (w.ip == any_ip || u.ip == any_ip || u.ip == w.ip))
        return true;
  return false;
}

size_t HostPortTable::bytes() const {
  size_t b = used_.bucket_count() * sizeof(void*);
  for (const auto& [slot, ports] : used_) b += 32 + ports.capacity() * sizeof(ports[0]);
  return b;
}

void ImageTable::set_node(int32_t slot, const std::vector<std::pair<std::vector<int32_t>, int64_t>>& images) {
  if (const auto old = names_on_.find(slot); old != names_on_.end()) {
    for (int32_t name : old->second) {
      const auto it = images_.find(name);
      if (it != images_.end() && --it->second.nodes == 0) images_.erase(it);
    }
    names_on_.erase(old);
  }
  std::vector<int32_t> names;
  for (const auto& [ids, size] : images) {
    for (int32_t name : ids) {
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;  // a name counts once per node
      names.push_back(name);
      const auto [it, fresh] = images_.try_emplace(name, Image{size, 0});
      ++it->second.nodes;
    }
  }
  if (names.empty()) return;
  std::sort(names.begin(), names.end());
  names_on_.emplace(slot, std::move(names));
}

const ImageTable::Image* ImageTable::find(int32_t name) const {
  const auto it = images_.find(name);
  return it == images_.end() ? nullptr : &it->second;
}

bool ImageTable::node_has(int32_t slot, int32_t name) const {
  const auto it = names_on_.find(slot);
  return it != names_on_.end() && std::binary_search(it->second.begin(), it->second.end(), name);
}

size_t ImageTable::bytes() const {
  size_t b = (images_.bucket_count() + names_on_.bucket_count()) * sizeof(void*) + images_.size() * 40;
  for (const auto& [slot, names] : names_on_) b += 32 + names.capacity() * sizeof(int32_t);
  return b;
}

}  // namespace vcore
