// What a few node plugins read beyond resources and labels, kept sparse so a cluster without it pays nothing:
// the host ports the bound pods hold (NodePorts) and the container images the nodes report (ImageLocality).
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace vcore {

// A host port a container takes: (host IP, protocol, port), the IP and protocol interned; the IP is 0.0.0.0 when
// the pod gives none and the protocol TCP (kube-scheduler's HostPortInfo sanitizes them so).
struct HostPort {
  int32_t ip;
  int32_t protocol;
  int32_t port;
  bool operator==(const HostPort& o) const { return ip == o.ip && protocol == o.protocol && port == o.port; }
};

// The host ports in use per node slot, counted (two pods bound on one port by someone else each hold it).
class HostPortTable {
 public:
  void apply(int32_t slot, const std::vector<HostPort>& ports, int sign);
  // Whether a wanted port conflicts with one in use on the slot: the same protocol and port on the same IP, or
  // either IP being 0.0.0.0 (`any_ip`: its interned id), as kube-scheduler's HostPortInfo.CheckConflict.
  bool conflicts(int32_t slot, const std::vector<HostPort>& wanted, int32_t any_ip) const;
  void clear(int32_t slot) { used_.erase(slot); }
  size_t bytes() const;

 private:
  std::unordered_map<int32_t, std::vector<std::pair<HostPort, int32_t>>> used_;  // slot -> (port, holders)
};

// The images nodes report (status.images), as kube-scheduler's cache keeps them: per image name its size (as the
// first node to report the name gave it, kept while any node has it) and how many nodes have it; per node slot
// the names it has, sorted.
class ImageTable {
 public:
  struct Image {
    int64_t size = 0;
    int32_t nodes = 0;
  };
  // Replace a slot's images: (name ids, size) per image as the node reports them.
  void set_node(int32_t slot, const std::vector<std::pair<std::vector<int32_t>, int64_t>>& images);
  void clear_node(int32_t slot) { set_node(slot, {}); }
  const Image* find(int32_t name) const;
  bool node_has(int32_t slot, int32_t name) const;
  bool empty() const { return images_.empty(); }
  size_t bytes() const;

 private:
  std::unordered_map<int32_t, Image> images_;
  std::unordered_map<int32_t, std::vector<int32_t>> names_on_;  // slot -> sorted name ids
};

}  // namespace vcore
