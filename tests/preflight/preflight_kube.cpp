// The Kubernetes API stand-in (tests/runtime/fake_kube) as a program, for `pipec preflight`'s
// tests: it serves the cluster a fixture describes on 127.0.0.1, prints its port, and when
// its standard input closes writes every request it was sent ("METHOD /path?query", one a
// line) to REQUESTS and exits.
//   preflight_kube FIXTURE.json REQUESTS
// The fixture: {"objects": {API_PATH: OBJECT}, "serve": {GROUP/VERSION: [PLURAL]},
// "runtimes": {NAME: "torch"|"mpi"} (ClusterTrainingRuntimes, served by Trainer's stand-in),
// "roles": {ANY: {"subject", "group", "resources", "verbs"}}, "absent_images": [REPO:REF],
// "reads_403": N, "forbid": [PATH_PREFIX] (GETs answered 403), "require_labels": {LABEL:
// WEBHOOK} (an admission webhook refusing jobs without the label)}.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/runtime/fake_kube.hpp"

int main(int argc, char** argv) {
  using nlohmann::json;
  if (argc != 3) {
    std::cerr << "usage: preflight_kube FIXTURE.json REQUESTS\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  json fixture = json::parse(in, nullptr, false);
  if (!fixture.is_object()) {
    std::cerr << "preflight_kube: " << argv[1] << " is not a JSON object\n";
    return 2;
  }
  pipec::runtime::testing::FakeKube kube;
  const json objects = fixture.value("objects", json::object()), served = fixture.value("serve", json::object()),
             roles = fixture.value("roles", json::object()), absent = fixture.value("absent_images", json::array());
  for (const auto& [path, object] : objects.items()) kube.put_object(path, object);
  for (const auto& [group_version, plurals] : served.items())
    kube.serve_api(group_version, plurals.get<std::vector<std::string>>());
  if (fixture.contains("runtimes"))
    kube.install_trainer(fixture["runtimes"].get<std::map<std::string, std::string>>());
  for (const auto& [name, role] : roles.items())
    kube.add_role(role.at("subject").get<std::string>(), role.at("group").get<std::string>(),
                  role.at("resources").get<std::vector<std::string>>(),
                  role.at("verbs").get<std::vector<std::string>>());
  for (const auto& image : absent) kube.image_absent(image.get<std::string>());
  kube.reads_403 = fixture.value("reads_403", 0);
  for (const auto& prefix : fixture.value("forbid", json::array())) kube.forbid(prefix.get<std::string>());
  const json labels = fixture.value("require_labels", json::object());
  for (const auto& [label, webhook] : labels.items())
    kube.require_label(label, webhook.get<std::string>());
  std::cout << kube.port() << std::endl;
  std::string rest((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  std::ofstream out(argv[2]);
  for (const auto& request : kube.requests()) out << request << '\n';
  return out ? 0 : 1;
}
