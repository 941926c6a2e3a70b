// The node plugin registry, the reason table it extends, and the normalizations plugins share (node_plugin.h).
#include "vcore/node_plugin.h"

#include <algorithm>
#include <mutex>

#include "vcore/errors.h"
#include "vcore/reasons.h"

namespace vcore {

namespace {

// Function-local statics: plugins register from static initializers in other translation units, in any order.
std::map<std::string, PluginFactory>& registry() {
  static std::map<std::string, PluginFactory> plugins;
  return plugins;
}

struct ReasonTable {
  std::vector<std::string> names;
  std::vector<uint8_t> unresolvable;
  std::map<std::string, int32_t> base;  // plugin -> code of its first reason
};

const ReasonTable& table() {
  // Built on first use, after every static initializer ran; plugins by name, so codes do not depend on link order.
  static const ReasonTable t = [] {
    ReasonTable out;
    out.names.assign(kFixedReasonNames, kFixedReasonNames + kFixedReasons);
    out.unresolvable.assign(kFixedReasonUnresolvable, kFixedReasonUnresolvable + kFixedReasons);
    for (const auto& [name, factory] : registry()) {
      const int32_t base = static_cast<int32_t>(out.names.size());
      out.base[name] = base;
      const auto plugin = factory(PluginArgs{});
      for (auto& reason : plugin->reasons()) out.names.push_back(std::move(reason));
      out.unresolvable.resize(out.names.size(), 0);
      for (int32_t k : plugin->unresolvable_reasons()) out.unresolvable.at(static_cast<size_t>(base + k)) = 1;
    }
    return out;
  }();
  return t;
}

}  // namespace

int64_t PluginArgs::get_int(const std::string& key, int64_t fallback) const {
  const auto it = ints.find(key);
  return it == ints.end() ? fallback : it->second;
}

double PluginArgs::get_float(const std::string& key, double fallback) const {
  const auto it = floats.find(key);
  return it == floats.end() ? fallback : it->second;
}

const std::string& PluginArgs::get_string(const std::string& key, const std::string& fallback) const {
  const auto it = strings.find(key);
  return it == strings.end() ? fallback : it->second;
}

std::vector<std::string> PluginArgs::get_strings(const std::string& key) const {
  const auto it = string_lists.find(key);
  return it == string_lists.end() ? std::vector<std::string>{} : it->second;
}

std::vector<int64_t> PluginArgs::get_ints(const std::string& key) const {
  const auto it = int_lists.find(key);
  return it == int_lists.end() ? std::vector<int64_t>{} : it->second;
}

void PodPlugin::filter(int32_t, int32_t, uint8_t*, int64_t*) const {}
void PodPlugin::score(int32_t, int32_t, const uint8_t*, int64_t*) const {}
void PodPlugin::score_nodes(const int32_t*, int32_t, int64_t*) const {}
void PodPlugin::reserve(ClusterState&, const CompiledPod&, int32_t) const {}

void register_plugin(const std::string& name, PluginFactory factory) {
  if (!registry().emplace(name, factory).second) throw Invalid("node plugin " + name + " registered twice");
}

PluginFactory find_plugin(const std::string& name) {
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

std::vector<std::string> registered_plugins() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

const std::vector<std::string>& reason_table() { return table().names; }

const std::vector<uint8_t>& reason_unresolvable() { return table().unresolvable; }

int32_t plugin_reason_base(const std::string& plugin) {
  const auto it = table().base.find(plugin);
  if (it == table().base.end()) throw Invalid("node plugin " + plugin + " is not registered");
  return it->second;
}

int32_t insufficient_base() { return static_cast<int32_t>(table().names.size()); }

}  // namespace vcore
