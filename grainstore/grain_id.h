// Content-derived ids: BLAKE2b-256 (libsodium crypto_generichash) of a body,
// and of a grain's canonical encoding.
#ifndef GRAINSTORE_GRAIN_ID_H_
#define GRAINSTORE_GRAIN_ID_H_

#include <cstdint>
#include <string>
#include <string_view>

#include <sodium.h>

#include "grainstore/types.h"

namespace grainstore {

inline constexpr std::size_t kHashBytes = 32;
// Random bytes each grain's id is salted with (schema v6), so that the id
// cannot confirm a guessed body once purge has erased the body and the salt.
inline constexpr std::size_t kGrainSaltBytes = 16;

// Everything that identifies a grain. The canonical encoding is a tag followed
// by each field as <u64 little-endian length><bytes>, integers as 8 bytes LE.
// A salted grain is tagged "areev-grain-v2" and ends with its salt; one
// without ("", written before v6) keeps the "areev-grain-v1" encoding.
struct GrainFields {
  GrainType type = GrainType::kFact;
  std::string_view ns;
  std::string_view subject;
  std::string_view relation;
  std::string_view object;
  std::string_view body_hash;     // raw 32 bytes, or "" when there is no body
  std::string_view supersedes;    // raw grain id, or ""
  std::string_view derived_from;  // raw grain id, or ""
  std::uint64_t chain_seq = 0;
  std::int64_t created_ns = 0;
  std::string_view salt;  // kGrainSaltBytes random bytes, or "" for a v1 grain
};

// Grain salts: ChaCha20 output under a key drawn from the system's random
// source and never stored, so they are as unpredictable as random bytes
// without a system call per grain. A forked child draws a key of its own, so
// it never repeats its parent's salts. Not thread-safe (a Store's mutex
// guards its source).
class SaltSource {
 public:
  void Next(unsigned char (&out)[kGrainSaltBytes]);

 private:
  unsigned char key_[crypto_stream_chacha20_KEYBYTES] = {};
  std::uint64_t counter_ = 0;  // the nonce of the next salt
  unsigned forks_ = ~0u;       // ProcessForkCount() when the key was drawn
};

// Raw 32-byte ids.
std::string HashBody(std::string_view body);
// Bytes this process has fed to BodyHasher (HashBody included), for tests
// that check a write hashes only what it must.
std::uint64_t HashedBytes();

// HashBody of a body fed in pieces. Digest() may be taken at any point and
// feeding may go on after it, so a body that grows by appends is hashed by
// copying the hasher of its prefix and feeding only the new bytes.
class BodyHasher {
 public:
  BodyHasher();
  void Update(std::string_view piece);
  // The raw 32-byte hash of everything fed so far.
  std::string Digest() const;

 private:
  crypto_generichash_state state_;
};
std::string ComputeGrainId(const GrainFields& fields);

std::string ToHex(std::string_view raw);
// True when ToHex(raw) starts with `hex_prefix` (lowercase), without making it.
bool RawIdHasHexPrefix(std::string_view raw, std::string_view hex_prefix);
// False if `hex` has an odd length or a non-hex character.
bool FromHex(std::string_view hex, std::string* raw);

}  // namespace grainstore

#endif  // GRAINSTORE_GRAIN_ID_H_
