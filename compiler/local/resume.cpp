// Resume and the cache of a local run (docs/local.md "Resume and the cache"): a step's key,
// finding an earlier result with the same key, and keeping this run's results so a later
// run (or this one, interrupted) can reuse them.
#include "compiler/local/runner.hpp"

#include <ctime>

#include "compiler/base/sha256.hpp"

namespace pipec::local::detail {

namespace {

// The record of a step's result, beside its files: steps/STEP/cache.json, DIR/KEY/cache.json.
constexpr const char* kRecord = "cache.json";
// Bumped when what the key holds changes, so older records are not taken for this one's.
constexpr int kKeyFormat = 1;
// A record is small (the key's input, digests, names); a bigger one is not ours.
constexpr std::uint64_t kMaxRecordBytes = 4u << 20;

// The files of a step's result (relative to its directory): its log(s), process.json,
// job.json, metrics, hostfile and outputs/NAME; not its root (fs/) or working directory.
std::vector<std::string> result_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && e.path().filename() != kRecord) files.push_back(e.path().filename().string());
  for (const auto& e : fs::directory_iterator(dir + "/outputs", ec))
    if (e.is_regular_file(ec)) files.push_back("outputs/" + e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

// A name a record may list: a file of the step's directory or of its outputs/.
bool plain_file_name(const std::string& name) {
  std::string base = name.rfind("outputs/", 0) == 0 ? name.substr(8) : name;
  return !base.empty() && base != "." && base != ".." && base.find('/') == std::string::npos &&
         base.find('\0') == std::string::npos;
}

// `from`'s file at `to`: a hard link where the file system allows, else a copy.
bool place_file(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::remove(to, ec);
  fs::create_hard_link(from, to, ec);
  if (!ec) return true;
  return fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec) && !ec;
}

long long now_seconds() { return static_cast<long long>(std::time(nullptr)); }

// The record, whole or not at all: a temporary file renamed into place. Not synced to the
// disk (an fsync cost about 6 ms of wall time a step on the machine measured, as much as a
// trivial step's whole run): a run stopped by Ctrl-C, kill -9 or a crash of pipec leaves
// the whole record or none, as the rename is atomic; only a crash of the machine may leave
// an empty or partial record, which is not read as one (the step runs again).
bool write_record(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> serial{0};
  const std::string tmp = fmt::format("{}.tmp-{}-{}", path, getpid(), serial++);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = true;
  for (std::size_t off = 0; ok && off < text.size();) {
    ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<std::size_t>(n);
  }
  ok = close(fd) == 0 && ok && rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) unlink(tmp.c_str());
  return ok;
}

}  // namespace

bool file_digest(const std::string& path, std::string& hex, std::string& problem) {
  Sha256 digest;
  if (!input::read_file_in_pieces(path, [&](std::string_view piece) { digest.update(piece); }, problem))
    return false;
  hex = digest.hex();
  return true;
}

void StepKey::seal() { key = sha256_hex(keyed.dump()); }

StepKey container_key(const ir::ContainerOp& op, const ir::Pod::Cache& cache, const std::string& image,
                      const Proc& proc, const std::map<std::string, std::string>& args,
                      const std::vector<std::pair<std::string, std::string>>& input_files) {
  StepKey k;
  k.cacheable = cache.reuse;
  k.staleness = cache.staleness_seconds;
  Json env = Json::array();
  for (const auto& e : proc.env)  // HOME is the step's own working directory: not this run's path
    env.push_back(e == "HOME=" + proc.dir + "/work" ? std::string("HOME=STEP/work") : e);
  Json files = Json::object();
  for (const auto& [host, path] : input_files) {
    std::string hex, problem;
    if (!file_digest(host, hex, problem)) k.cacheable = false;  // the step fails on it anyway
    files[path] = hex;
  }
  Json outputs = Json::array(), volumes = Json::array();
  for (const auto& out : op.outputs) {
    outputs.push_back({out.name, out.path, out.type.kind == ir::TypeKind::File});
    k.outputs.emplace_back(out.name, out.type.kind == ir::TypeKind::File);
  }
  for (const auto& v : op.volumes) {
    // The kind's source word ("empty" for a memory volume too): keys stay those of before.
    volumes.push_back({ir::volume_kind_word(v.kind), v.name, v.path, v.sub_path, v.read_only});
    // What a claim holds is not in the key, and what the step writes there is a side effect.
    if (v.kind == ir::ContainerOp::Volume::Kind::Pvc) k.cacheable = false;
  }
  k.keyed = {{"format", kKeyFormat}, {"kind", "container"},  {"op", op.name},
             {"image", image},       {"argv", proc.argv},    {"env", env},
             {"args", args},         {"input_files", files}, {"outputs", outputs},
             {"volumes", volumes},   {"working_dir", op.working_dir}, {"metrics_from", op.metrics_from}};
  k.seal();
  return k;
}

StepKey training_key(const Json& job, bool tf_master_form, const std::vector<std::string>& metrics,
                     bool mounts_claims) {
  StepKey k;
  k.cacheable = !mounts_claims;
  k.keyed = {{"format", kKeyFormat}, {"kind", "training"}, {"job", job}, {"tf_master", tf_master_form},
             {"metrics", metrics}};
  k.seal();
  return k;
}

bool Runner::forced(const std::string& step, const std::vector<std::string>& depends, const Scope& scope,
                    const std::string& name) {
  if (o_.from.empty()) return false;
  if (step == o_.from || name == o_.from) return true;
  std::lock_guard lock(mu_);
  for (const Scope* s = &scope; s; s = s->parent)
    if (s->all_forced) return true;
  return std::any_of(depends.begin(), depends.end(), [&](const std::string& d) { return scope.forced.count(d) > 0; });
}

void Runner::mark_forced(Scope& scope, const std::string& node) {
  std::lock_guard lock(mu_);
  scope.forced.insert(node);
}

// The earlier result in `from` (a step's directory in the resumed run, or a cache entry),
// when it is whole and has this key; its files are then placed in `dir` (nothing to do
// when it is `dir` itself). Fills the step's values and metrics.
bool Runner::take(const std::string& from, const std::string& dir, const StepKey& k,
                  std::map<std::string, std::string>& values, Record& rec) {
  std::string text, problem;
  if (!input::read_file(from + "/" + kRecord, kMaxRecordBytes, text, problem)) return false;
  Json r = Json::parse(text, nullptr, false);
  if (!r.is_object() || r.value("format", 0) != kKeyFormat || r.value("key", "") != k.key) return false;
  if (k.staleness && now_seconds() - r.value("finished", 0LL) > *k.staleness) return false;
  const Json& outputs = r.contains("outputs") ? r["outputs"] : Json();
  const Json& files = r.contains("files") ? r["files"] : Json();
  if (!outputs.is_object() || !files.is_array()) return false;
  for (const auto& [name, is_file] : k.outputs) {  // each output whole, as it was kept
    std::string hex;
    if (!outputs.contains(name) || !file_digest(from + "/outputs/" + name, hex, problem) || outputs[name] != hex)
      return false;
  }
  std::error_code ec;
  bool same = fs::equivalent(from, dir, ec);
  if (!same) {
    fs::remove_all(dir, ec);
    fs::create_directories(dir + "/outputs", ec);
    for (const auto& f : files) {
      if (!f.is_string() || !plain_file_name(f.get<std::string>())) return false;
      if (!place_file(from + "/" + f.get<std::string>(), dir + "/" + f.get<std::string>())) return false;
    }
    if (!place_file(from + "/" + kRecord, dir + "/" + kRecord)) return false;
  }
  for (const auto& [name, is_file] : k.outputs) {
    std::string path = fs::absolute(dir + "/outputs/" + name).string();
    if (is_file) {
      values[name] = path;
    } else if (!input::read_file(path, input::kMaxStepOutputBytes, values[name], problem)) {
      return false;
    }
  }
  rec.metrics = r.value("metrics", "");
  return true;
}

bool Runner::reuse(const std::string& name, const std::string& dir, const StepKey& k, bool is_forced,
                   std::map<std::string, std::string>& values, Record& rec) {
  bool wanted = (!o_.resume_dir.empty() || !o_.cache_dir.empty()) && k.cacheable && !is_forced;
  if (wanted) {
    std::vector<std::string> sources;
    if (!o_.resume_dir.empty()) sources.push_back(o_.resume_dir + "/steps/" + name);
    if (!o_.cache_dir.empty()) sources.push_back(o_.cache_dir + "/" + k.key);
    for (const auto& from : sources) {
      values.clear();
      rec.metrics.clear();
      if (take(from, dir, k, values, rec)) {
        rec.reused_from = from;
        return true;
      }
    }
  }
  // It runs: on a fresh directory (a resumed run's earlier files of this step go).
  std::error_code ec;
  fs::remove_all(dir, ec);
  values.clear();
  rec.metrics.clear();
  return false;
}

void Runner::keep(const std::string& name, const std::string& dir, const StepKey& k, const Record& rec) {
  if (!k.cacheable) return;
  Json outputs = Json::object();
  for (const auto& [output, is_file] : k.outputs) {
    std::string hex, problem;
    if (!file_digest(dir + "/outputs/" + output, hex, problem)) return;
    outputs[output] = hex;
  }
  std::vector<std::string> files = result_files(dir);
  Json r = {{"format", kKeyFormat}, {"key", k.key},       {"step", name},     {"keyed", k.keyed},
            {"finished", now_seconds()}, {"metrics", rec.metrics}, {"outputs", outputs}, {"files", files}};
  // Written last and whole (a rename): a run stopped at any point leaves each step either
  // with its record and every file it names, or without a record (it runs again).
  if (!write_record(dir + "/" + kRecord, r.dump(2) + "\n")) return;
  if (o_.cache_dir.empty()) return;
  // The cache entry: made whole under a temporary name, then renamed into place.
  static std::atomic<unsigned> serial{0};
  std::string entry = o_.cache_dir + "/" + k.key;
  std::string part = fmt::format("{}/.part-{}-{}-{}", o_.cache_dir, k.key.substr(0, 16), getpid(), serial++);
  std::error_code ec;
  if (fs::exists(entry, ec)) return;
  fs::create_directories(part + "/outputs", ec);
  bool whole = !ec;
  for (const auto& f : files) whole = whole && place_file(dir + "/" + f, part + "/" + f);
  whole = whole && place_file(dir + "/" + kRecord, part + "/" + kRecord);
  if (!whole || rename(part.c_str(), entry.c_str()) != 0) fs::remove_all(part, ec);
}

}  // namespace pipec::local::detail
