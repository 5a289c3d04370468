#include "grain_id.h"

#include <sodium.h>

#include <atomic>
#include <cstring>

#include "db.h"

namespace grainstore {
namespace {

constexpr char kDigits[] = "0123456789abcdef";

constexpr char kGrainTagV1[] = "areev-grain-v1";
constexpr char kGrainTagV2[] = "areev-grain-v2";  // salted

void Update(crypto_generichash_state* st, std::string_view bytes) {
  unsigned char len[8];
  std::uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  crypto_generichash_update(st, len, sizeof len);
  crypto_generichash_update(st, reinterpret_cast<const unsigned char*>(bytes.data()),
                            bytes.size());
}

void UpdateInt(crypto_generichash_state* st, std::uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  crypto_generichash_update(st, b, sizeof b);
}

std::atomic<std::uint64_t> hashed_bytes{0};

}  // namespace

std::uint64_t HashedBytes() { return hashed_bytes.load(std::memory_order_relaxed); }

std::string HashBody(std::string_view body) {
  BodyHasher hasher;
  hasher.Update(body);
  return hasher.Digest();
}

BodyHasher::BodyHasher() { crypto_generichash_init(&state_, nullptr, 0, kHashBytes); }

void BodyHasher::Update(std::string_view piece) {
  hashed_bytes.fetch_add(piece.size(), std::memory_order_relaxed);
  crypto_generichash_update(&state_, reinterpret_cast<const unsigned char*>(piece.data()),
                            piece.size());
}

std::string BodyHasher::Digest() const {
  crypto_generichash_state done = state_;
  std::string out(kHashBytes, '\0');
  crypto_generichash_final(&done, reinterpret_cast<unsigned char*>(out.data()), out.size());
  return out;
}

void SaltSource::Next(unsigned char (&out)[kGrainSaltBytes]) {
  if (forks_ != ProcessForkCount()) {
    randombytes_buf(key_, sizeof key_);
    forks_ = ProcessForkCount();
    counter_ = 0;
  }
  unsigned char nonce[crypto_stream_chacha20_NONCEBYTES] = {};
  static_assert(sizeof nonce == sizeof counter_);
  std::memcpy(nonce, &counter_, sizeof counter_);
  ++counter_;
  crypto_stream_chacha20(out, sizeof out, nonce, key_);
}

std::string ComputeGrainId(const GrainFields& f) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, nullptr, 0, kHashBytes);
  Update(&st, f.salt.empty() ? kGrainTagV1 : kGrainTagV2);
  UpdateInt(&st, static_cast<std::uint64_t>(f.type));
  Update(&st, f.ns);
  Update(&st, f.subject);
  Update(&st, f.relation);
  Update(&st, f.object);
  Update(&st, f.body_hash);
  Update(&st, f.supersedes);
  Update(&st, f.derived_from);
  UpdateInt(&st, f.chain_seq);
  UpdateInt(&st, static_cast<std::uint64_t>(f.created_ns));
  if (!f.salt.empty()) Update(&st, f.salt);
  std::string out(kHashBytes, '\0');
  crypto_generichash_final(&st, reinterpret_cast<unsigned char*>(out.data()), out.size());
  return out;
}

std::string ToHex(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

bool RawIdHasHexPrefix(std::string_view raw, std::string_view hex_prefix) {
  if (hex_prefix.size() > raw.size() * 2) return false;
  for (std::size_t i = 0; i < hex_prefix.size(); ++i) {
    const auto byte = static_cast<unsigned char>(raw[i / 2]);
    if (kDigits[i % 2 == 0 ? byte >> 4 : byte & 15] != hex_prefix[i]) return false;
  }
  return true;
}

bool FromHex(std::string_view hex, std::string* raw) {
  if (hex.size() % 2 != 0) return false;
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  raw->clear();
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    int hi = val(hex[i]), lo = val(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    raw->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

}  // namespace grainstore
