// Bindings of the VolumeStore: storage objects in and out of a ClusterState (as the flat dicts vcore.volumes builds),
// a pod's volumes for PodInput, and what VolumeBinding assumed for a placed pod. Writers take the state's exclusive
// lock while holding the GIL, as register_cluster.cpp's do.
#include <mutex>
#include <shared_mutex>

#include "convert.h"
#include "registry.h"
#include "vcore/volumes/volume_binder.h"

namespace vcore_bindings {
namespace {

using vcore::ClusterState;
using Requirement = std::tuple<std::string, std::string, std::vector<std::string>>;

vcore::StorageSize storage_size(const py::handle& v) {
  const auto [bytes, milli] = v.cast<std::pair<int64_t, int64_t>>();
  return {bytes, milli};
}

// Label requirements (In, NotIn, Exists, DoesNotExist) compiled against the state.
std::vector<vcore::LabelRequirement> requirements(ClusterState& s, const std::vector<Requirement>& in,
                                                  const std::string& where) {
  vcore::TermInput term;
  for (const auto& [key, op, values] : in) term.expressions.push_back({key, op, values});
  return s.compile_term(term, where).expressions;
}

vcore::TermInput term_of(const py::dict& d, const std::string& what) {
  vcore::TermInput out;
  for (const auto& [key, op, values] : field_or<std::vector<Requirement>>(d, "expressions", what, {}))
    out.expressions.push_back({key, op, values});
  for (const auto& [key, op, values] : field_or<std::vector<Requirement>>(d, "fields", what, {}))
    out.fields.push_back({key, op, values});
  return out;
}

vcore::VolumeNodeAffinity affinity(ClusterState& s, const py::handle& v, const std::string& where) {
  vcore::VolumeNodeAffinity out;
  if (v.is_none()) return out;
  out.set = true;
  const auto terms = v.cast<py::list>();
  for (size_t i = 0; i < terms.size(); ++i)
    out.terms.push_back(s.compile_term(term_of(terms[i].cast<py::dict>(), where),
                                       where + ".nodeSelectorTerms[" + std::to_string(i) + "]"));
  return out;
}

vcore::PersistentVolumeRecord pv_record(ClusterState& s, const py::dict& d) {
  vcore::PersistentVolumeRecord r;
  r.name = field<std::string>(d, "name", "persistentvolume");
  const std::string what = "persistentvolume " + r.name;
  r.resource_version = field_or<std::string>(d, "resource_version", what, "");
  for (const auto& [k, v] : field_or<std::vector<std::pair<std::string, std::string>>>(d, "labels", what, {}))
    r.labels.emplace_back(s.intern_string(k), s.intern_string(v));
  std::sort(r.labels.begin(), r.labels.end());
  r.storage_class = field_or<std::string>(d, "storage_class", what, "");
  if (d.contains("capacity") && !d["capacity"].is_none()) r.capacity = storage_size(d["capacity"]);
  r.access_modes = static_cast<uint8_t>(field_or<int64_t>(d, "access_modes", what, 0));
  r.block = field_or<bool>(d, "block", what, false);
  r.attributes_class = field_or<std::string>(d, "attributes_class", what, "");
  r.available = field_or<bool>(d, "available", what, false);
  r.deleting = field_or<bool>(d, "deleting", what, false);
  if (d.contains("claim_ref") && !d["claim_ref"].is_none()) {
    const auto [ns, name, uid] = d["claim_ref"].cast<std::tuple<std::string, std::string, std::string>>();
    r.has_claim_ref = true;
    r.claim_ref = {ns, name, uid};
  }
  r.affinity = affinity(s, d.contains("affinity") ? py::object(d["affinity"]) : py::object(py::none()),
                        what + ": spec.nodeAffinity.required");
  if (d.contains("csi") && !d["csi"].is_none())
    std::tie(r.csi_driver, r.csi_handle) = d["csi"].cast<std::pair<std::string, std::string>>();
  if (d.contains("migration") && !d["migration"].is_none()) {
    const auto m = d["migration"].cast<py::dict>();
    r.migration_plugin = field<std::string>(m, "plugin", what);
    r.migrated_driver = field_or<std::string>(m, "driver", what, "");
    r.migrated_handle = field_or<std::string>(m, "handle", what, "");
    r.migration_error = field_or<std::string>(m, "error", what, "");
    r.migrated_affinity = affinity(s, m.contains("affinity") ? py::object(m["affinity"]) : py::object(py::none()),
                                   what + ": spec.nodeAffinity.required (translated to CSI)");
  }
  using Zone = std::tuple<std::string, std::string, std::vector<std::string>>;
  for (const auto& [key, ga_key, values] : field_or<std::vector<Zone>>(d, "zones", what, {})) {
    vcore::ZoneLabel z;
    z.key = s.intern_string(key);
    z.ga_key = s.intern_string(ga_key);
    z.key_name = key;
    for (const auto& v : values) z.values.push_back(s.intern_string(v));
    std::sort(z.values.begin(), z.values.end());
    r.zones.push_back(std::move(z));
  }
  return r;
}

vcore::ClaimRecord claim_record(ClusterState& s, const py::dict& d) {
  vcore::ClaimRecord r;
  r.ns = field<std::string>(d, "namespace", "persistentvolumeclaim");
  r.name = field<std::string>(d, "name", "persistentvolumeclaim");
  const std::string what = "persistentvolumeclaim " + r.key();
  r.uid = field_or<std::string>(d, "uid", what, "");
  r.storage_class = field_or<std::string>(d, "storage_class", what, "");
  r.volume_name = field_or<std::string>(d, "volume_name", what, "");
  r.bind_completed = field_or<bool>(d, "bind_completed", what, false);
  r.lost = field_or<bool>(d, "lost", what, false);
  r.deleting = field_or<bool>(d, "deleting", what, false);
  if (d.contains("selected_node") && !d["selected_node"].is_none()) {
    r.has_selected_node = true;
    r.selected_node = field<std::string>(d, "selected_node", what);
  }
  r.access_modes = static_cast<uint8_t>(field_or<int64_t>(d, "access_modes", what, 0));
  r.block = field_or<bool>(d, "block", what, false);
  r.attributes_class = field_or<std::string>(d, "attributes_class", what, "");
  if (d.contains("request") && !d["request"].is_none()) {
    r.has_request = true;
    r.request = storage_size(d["request"]);
  }
  if (d.contains("selector") && !d["selector"].is_none()) {
    r.has_selector = true;
    r.selector = requirements(s, d["selector"].cast<std::vector<Requirement>>(), what + ": spec.selector");
  }
  if (d.contains("controller_uid") && !d["controller_uid"].is_none()) {
    r.has_controller = true;
    r.controller_uid = field<std::string>(d, "controller_uid", what);
  }
  return r;
}

vcore::StorageClassRecord class_record(ClusterState& s, const py::dict& d) {
  vcore::StorageClassRecord r;
  r.name = field<std::string>(d, "name", "storageclass");
  const std::string what = "storageclass " + r.name;
  r.provisioner = field_or<std::string>(d, "provisioner", what, "");
  const std::string mode = field_or<std::string>(d, "binding_mode", what, "");
  if (mode == "Immediate")
    r.mode = vcore::BindingMode::kImmediate;
  else if (mode == "WaitForFirstConsumer")
    r.mode = vcore::BindingMode::kWaitForFirstConsumer;
  else if (!mode.empty())
    throw py::value_error(what + ": volumeBindingMode: unknown mode '" + mode + "'");
  using Term = std::vector<std::pair<std::string, std::vector<std::string>>>;
  const auto terms = field_or<std::vector<Term>>(d, "allowed_topologies", what, {});
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<Requirement> in;
    for (const auto& [key, values] : terms[i]) in.emplace_back(key, "In", values);
    r.allowed_topologies.push_back(requirements(s, in, what + ": allowedTopologies[" + std::to_string(i) + "]"));
  }
  return r;
}

vcore::CsiNodeRecord csi_node_record(const py::dict& d) {
  vcore::CsiNodeRecord r;
  r.name = field<std::string>(d, "name", "csinode");
  const std::string what = "csinode " + r.name;
  for (const auto& [driver, count] : field_or<std::vector<std::pair<std::string, int64_t>>>(d, "limits", what, {}))
    r.limits[driver] = count;
  for (const auto& plugin : field_or<std::vector<std::string>>(d, "migrated", what, {})) r.migrated.insert(plugin);
  return r;
}

vcore::CapacityRecord capacity_record(ClusterState& s, const py::dict& d) {
  vcore::CapacityRecord r;
  r.key = field<std::string>(d, "key", "csistoragecapacity");
  const std::string what = "csistoragecapacity " + r.key;
  r.storage_class = field_or<std::string>(d, "storage_class", what, "");
  if (d.contains("limit") && !d["limit"].is_none()) {
    r.has_limit = true;
    r.limit = field<int64_t>(d, "limit", what);
  }
  if (d.contains("topology") && !d["topology"].is_none()) {
    r.has_topology = true;
    r.topology = requirements(s, d["topology"].cast<std::vector<Requirement>>(), what + ": nodeTopology");
  }
  return r;
}

vcore::AttachmentRecord attachment_record(const py::dict& d) {
  vcore::AttachmentRecord r;
  r.name = field<std::string>(d, "name", "volumeattachment");
  const std::string what = "volumeattachment " + r.name;
  r.node = field_or<std::string>(d, "node", what, "");
  r.attacher = field_or<std::string>(d, "attacher", what, "");
  if (d.contains("pv") && !d["pv"].is_none()) {
    r.has_pv = true;
    r.pv = field<std::string>(d, "pv", what);
  }
  return r;
}

const std::map<std::string, vcore::VolumeSource>& sources() {
  static const std::map<std::string, vcore::VolumeSource> by_name = {
      {"persistentVolumeClaim", vcore::VolumeSource::kClaim},
      {"ephemeral", vcore::VolumeSource::kEphemeral},
      {"gcePersistentDisk", vcore::VolumeSource::kGcePersistentDisk},
      {"awsElasticBlockStore", vcore::VolumeSource::kAwsElasticBlockStore},
      {"rbd", vcore::VolumeSource::kRbd},
      {"iscsi", vcore::VolumeSource::kIscsi},
      {"azureDisk", vcore::VolumeSource::kAzureDisk},
      {"azureFile", vcore::VolumeSource::kAzureFile},
      {"cinder", vcore::VolumeSource::kCinder},
      {"vsphereVolume", vcore::VolumeSource::kVsphere},
      {"portworxVolume", vcore::VolumeSource::kPortworx},
  };
  return by_name;
}

py::object assumption_dict(const vcore::VolumeAssumption& a) {
  py::list bindings;
  for (const auto& [pv, ref] : a.bindings) bindings.append(py::make_tuple(pv, ref.ns, ref.name, ref.uid));
  return py::dict(py::arg("node") = a.node, py::arg("bindings") = bindings, py::arg("provisions") = a.provisions);
}

}  // namespace

std::shared_ptr<const vcore::PodVolumes> pod_volumes_input(const py::handle& value, const std::string& what) {
  const auto d = value.cast<py::dict>();
  auto out = std::make_shared<vcore::PodVolumes>();
  out->ns = field<std::string>(d, "namespace", what);
  out->name = field<std::string>(d, "name", what);
  out->uid = field_or<std::string>(d, "uid", what, "");
  for (const auto& item : field<py::list>(d, "items", what)) {
    const auto v = item.cast<py::dict>();
    vcore::PodVolume pv;
    const std::string source = field<std::string>(v, "source", what);
    const auto it = sources().find(source);
    if (it == sources().end()) throw py::value_error(what + ": volumes: unknown source '" + source + "'");
    pv.source = it->second;
    pv.name = field<std::string>(v, "name", what);
    pv.claim = field_or<std::string>(v, "claim", what, "");
    pv.disk = field_or<std::string>(v, "disk", what, "");
    pv.pool = field_or<std::string>(v, "pool", what, "");
    pv.monitors = field_or<std::vector<std::string>>(v, "monitors", what, {});
    pv.read_only = field_or<bool>(v, "read_only", what, false);
    pv.migration_plugin = field_or<std::string>(v, "migration_plugin", what, "");
    pv.csi_driver = field_or<std::string>(v, "csi_driver", what, "");
    pv.csi_handle = field_or<std::string>(v, "csi_handle", what, "");
    pv.translation_error = field_or<std::string>(v, "translation_error", what, "");
    out->volumes.push_back(std::move(pv));
  }
  return out;
}

void register_volumes(py::module_& m) {
  m.def(
      "volumes_put",
      [](ClusterState& s, const std::string& kind, const py::dict& spec, bool keep_assumed) {
        // Records are built (interning strings, materializing label columns) under the lock: both write the state.
        std::unique_lock lock(s.mutex());
        vcore::VolumeStore& store = s.volumes();
        if (kind == "persistentvolume")
          store.put_pv(pv_record(s, spec), keep_assumed);
        else if (kind == "persistentvolumeclaim")
          store.put_claim(claim_record(s, spec), keep_assumed);
        else if (kind == "storageclass")
          store.put_class(class_record(s, spec));
        else if (kind == "csinode")
          store.put_csi_node(csi_node_record(spec));
        else if (kind == "csidriver")
          store.put_csi_driver(field<std::string>(spec, "name", "csidriver"),
                               field_or<bool>(spec, "storage_capacity", "csidriver", false));
        else if (kind == "csistoragecapacity")
          store.put_capacity(capacity_record(s, spec));
        else if (kind == "volumeattachment")
          store.put_attachment(attachment_record(spec));
        else
          throw py::value_error("volumes_put: unknown kind '" + kind + "'");
      },
      py::arg("state"), py::arg("kind"), py::arg("spec"), py::arg("keep_assumed") = false,
      "put a storage object (the dict vcore.volumes built) into the state's volume store, replacing one of its name");
  m.def(
      "volumes_remove",
      [](ClusterState& s, const std::string& kind, const std::string& name) {
        std::unique_lock lock(s.mutex());
        vcore::VolumeStore& store = s.volumes();
        if (kind == "persistentvolume")
          store.remove_pv(name);
        else if (kind == "persistentvolumeclaim")
          store.remove_claim(name);
        else if (kind == "storageclass")
          store.remove_class(name);
        else if (kind == "csinode")
          store.remove_csi_node(name);
        else if (kind == "csidriver")
          store.remove_csi_driver(name);
        else if (kind == "csistoragecapacity")
          store.remove_capacity(name);
        else if (kind == "volumeattachment")
          store.remove_attachment(name);
        else
          throw py::value_error("volumes_remove: unknown kind '" + kind + "'");
      },
      py::arg("state"), py::arg("kind"), py::arg("name"),
      "remove a storage object by name (namespace/name for claims)");
  m.def(
      "volume_assumption",
      [](const ClusterState& s, const std::string& key) -> py::object {
        std::shared_lock lock(s.mutex());
        const vcore::BoundPod* pod = s.bound_pod(key);
        if (pod == nullptr || pod->volume_assumption == nullptr) return py::none();
        return assumption_dict(*pod->volume_assumption);
      },
      py::arg("state"), py::arg("key"),
      "what VolumeBinding's Reserve assumed for a bound pod: {node, bindings: [(pv, claim namespace, claim name, "
      "claim uid)], provisions: [claim key]}; None when nothing");
  m.def(
      "volume_assumed_pods",
      [](const ClusterState& s) {
        std::shared_lock lock(s.mutex());
        const auto& keys = s.volumes().assumed_pods();
        return std::vector<std::string>(keys.begin(), keys.end());
      },
      py::arg("state"), "the bound pods VolumeBinding assumed volumes for, in key order");
  m.def(
      "volume_rejection",
      [](const ClusterState& s, const std::string& key, const std::string& plugin) {
        return s.volumes().rejection(key, plugin);
      },
      py::arg("state"), py::arg("key"), py::arg("plugin"),
      "the message of the last rejection of a pod by a volume plugin (\"\" when none was noted)");
  m.def(
      "volume_pv_fits",
      [](const ClusterState& s, const std::string& pv_name, const std::string& node) -> py::object {
        std::shared_lock lock(s.mutex());
        const vcore::PersistentVolumeRecord* pv = s.volumes().pv(pv_name);
        const int32_t slot = s.node_index(node);
        if (pv == nullptr || slot < 0) return py::none();
        // tryTranslatePVToCSI then CheckNodeAffinity, as the binder checks a PV it bound.
        const vcore::VolumeNodeAffinity* affinity = &pv->affinity;
        if (!pv->migration_plugin.empty() && vcore::migrated_on(s.volumes().csi_node(node), pv->migration_plugin)) {
          if (!pv->migration_error.empty())
            return py::make_tuple(false, "could not translate pv: " + pv->migration_error);
          affinity = &pv->migrated_affinity;
        }
        return py::make_tuple(affinity->matches(s, slot), std::string());
      },
      py::arg("state"), py::arg("pv"), py::arg("node"),
      "whether a PV's node affinity (translated to CSI where the node migrates its plugin) allows the node: "
      "(fits, translation error or \"\"); None when the PV or the node is unknown");
  m.def(
      "volume_claim_users",
      [](const ClusterState& s, const std::string& claim_key) {
        std::shared_lock lock(s.mutex());
        return s.volumes().claim_users(claim_key);
      },
      py::arg("state"), py::arg("claim_key"), "bound pods with a persistentVolumeClaim volume of this claim");
  m.def(
      "volume_objects",
      [](const ClusterState& s) {
        std::shared_lock lock(s.mutex());
        return s.volumes().n_objects();
      },
      py::arg("state"), "how many storage objects the state's volume store holds");
}

}  // namespace vcore_bindings
