#include "bench_util.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>
#include <system_error>

#include <fmt/core.h>

namespace bench {

void Die(std::string_view message) {
  std::cerr << "bench: " << message << "\n";
  std::exit(2);
}

ScratchDir::ScratchDir(const std::string& parent) {
  std::string templ = parent + "/areev-bench-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) Die("mkdtemp failed under " + parent);
  path_ = buf.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Stats Summarize(std::vector<double> samples_ns) {
  Stats s;
  if (samples_ns.empty()) return s;
  std::sort(samples_ns.begin(), samples_ns.end());
  s.n = samples_ns.size();
  auto at = [&](double q) {
    std::size_t i = static_cast<std::size_t>(q * static_cast<double>(s.n - 1) + 0.5);
    return samples_ns[std::min(i, s.n - 1)];
  };
  s.median_ns = at(0.5);
  s.p90_ns = at(0.9);
  s.p99_ns = at(0.99);
  s.total_ns = std::accumulate(samples_ns.begin(), samples_ns.end(), 0.0);
  s.mean_ns = s.total_ns / static_cast<double>(s.n);
  return s;
}

std::string FormatNs(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

std::unique_ptr<grainstore::Store> OpenStoreOrDie(const std::string& path,
                                                  grainstore::Durability durability) {
  grainstore::Options options;
  options.durability = durability;
  auto store = grainstore::Store::Open(path, options);
  if (!store.has_value()) Die("cannot open store " + path + ": " + store.error().ToString());
  return std::move(store).value();
}

grainstore::NsId NamespaceOrDie(grainstore::Store* store, std::string_view name) {
  auto ns = store->Namespace(name);
  if (!ns.has_value()) Die("cannot resolve namespace: " + ns.error().ToString());
  return *ns;
}

grainstore::Durability ParseDurability(std::string_view text) {
  if (text == "normal") return grainstore::Durability::kNormal;
  if (text == "full") return grainstore::Durability::kFull;
  Die("durability must be normal or full, got " + std::string(text));
}

std::string_view DurabilityName(grainstore::Durability durability) {
  return durability == grainstore::Durability::kFull ? "full" : "normal";
}

std::vector<std::string> ReadLinesOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Die("cannot read " + path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

void WriteFileOrDie(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) Die("cannot write " + path);
}

}  // namespace bench
