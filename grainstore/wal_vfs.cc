#include "wal_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace grainstore {
namespace {

constexpr char kVfsName[] = "areev-coalesce";
// Writes are handed on once this much is buffered; a commit is one pwrite up
// to this size.
constexpr std::size_t kMaxBuffered = std::size_t{1} << 20;
constexpr int kFrameHeaderBytes = 24;
// The unix VFS writes at most 128 KiB - 1 bytes per call (it masks larger
// lengths), so a flush hands the buffer over in pieces no larger than this.
constexpr std::size_t kMaxWrite = std::size_t{64} << 10;

// Write-behind state of one open WAL file.
struct WalBuffer {
  std::mutex mu;
  sqlite3_file* real = nullptr;
  std::string data;
  sqlite3_int64 offset = 0;     // file offset of data[0]
  bool commit_header = false;   // the last write was the header of a commit frame
  int deferred_error = SQLITE_OK;  // a flush that could not report its error
  // The thread whose writes the buffer holds (its t_thread_tag), null while
  // empty. A connection's write transaction runs on one thread, from its
  // first frame to the lock release that ends it.
  std::atomic<const void*> writer{nullptr};
};

// Identifies the calling thread by the address of a thread-local object.
thread_local const char t_thread_tag = 0;

// Every open WAL buffer of the process, and how many hold data. Lock order:
// g_list_mu, then a buffer's mu.
std::mutex g_list_mu;
std::vector<WalBuffer*>* g_list = nullptr;  // leaked on purpose: used at exit
std::atomic<int> g_nonempty{0};

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;

struct File {
  sqlite3_file base;  // first: SQLite sees a File as a sqlite3_file
  sqlite3_file* real;
  WalBuffer* wal;  // null unless this is a WAL file
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }
WalBuffer* Wal(sqlite3_file* f) { return reinterpret_cast<File*>(f)->wal; }

// Expects b->mu held.
int FlushLocked(WalBuffer* b) {
  if (b->data.empty()) return SQLITE_OK;
  int rc = SQLITE_OK;
  for (std::size_t done = 0; done < b->data.size() && rc == SQLITE_OK; done += kMaxWrite) {
    std::size_t n = std::min(kMaxWrite, b->data.size() - done);
    rc = b->real->pMethods->xWrite(b->real, b->data.data() + done, static_cast<int>(n),
                                   b->offset + static_cast<sqlite3_int64>(done));
  }
  b->data.clear();
  b->commit_header = false;
  b->writer.store(nullptr, std::memory_order_relaxed);
  g_nonempty.fetch_sub(1, std::memory_order_relaxed);
  return rc;
}

// Hands every WAL write the calling thread has buffered to its file. An
// error is kept on the buffer and returned by its next operation.
//
// Only the calling thread's: frames buffered by another thread belong to a
// write transaction that still holds the WAL write lock, and its own lock
// release flushes them. Waiting for them here would queue this thread (the
// checkpoint thread, say) behind every frame that transaction writes.
void FlushOwn() {
  if (g_nonempty.load(std::memory_order_acquire) == 0) return;
  std::lock_guard list_lock(g_list_mu);
  for (WalBuffer* b : *g_list) {
    if (b->writer.load(std::memory_order_relaxed) != &t_thread_tag) continue;
    std::lock_guard lock(b->mu);
    int rc = FlushLocked(b);
    if (rc != SQLITE_OK && b->deferred_error == SQLITE_OK) b->deferred_error = rc;
  }
}

// Flushes and reports any earlier deferred error. Expects b->mu held.
int SettleLocked(WalBuffer* b) {
  int rc = FlushLocked(b);
  if (b->deferred_error != SQLITE_OK) {
    rc = b->deferred_error;
    b->deferred_error = SQLITE_OK;
  }
  return rc;
}

bool IsCommitFrameHeader(const void* data, int amount) {
  if (amount != kFrameHeaderBytes) return false;
  const auto* p = static_cast<const unsigned char*>(data);
  return (p[4] | p[5] | p[6] | p[7]) != 0;  // "database size after commit"
}

// ---- methods shared by every file: forward to the real file.

int Close(sqlite3_file* f) {
  File* file = reinterpret_cast<File*>(f);
  int rc = SQLITE_OK;
  if (file->wal != nullptr) {
    {
      std::lock_guard list_lock(g_list_mu);
      g_list->erase(std::find(g_list->begin(), g_list->end(), file->wal));
    }
    {
      std::lock_guard lock(file->wal->mu);
      rc = SettleLocked(file->wal);
    }
    delete file->wal;
    file->wal = nullptr;
  }
  int close_rc = file->real->pMethods->xClose(file->real);
  return rc != SQLITE_OK ? rc : close_rc;
}
int Read(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  return Real(f)->pMethods->xRead(Real(f), out, amount, offset);
}
int Write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  return Real(f)->pMethods->xWrite(Real(f), data, amount, offset);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); }
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  const sqlite3_io_methods* m = Real(f)->pMethods;
  if (m->iVersion < 2 || m->xShmMap == nullptr) return SQLITE_IOERR_SHMMAP;
  return m->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  FlushOwn();  // spilled frames reach the WAL before any lock changes hands
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) {
  FlushOwn();
  Real(f)->pMethods->xShmBarrier(Real(f));
}
int ShmUnmap(sqlite3_file* f, int delete_flag) {
  FlushOwn();
  return Real(f)->pMethods->xShmUnmap(Real(f), delete_flag);
}
int Fetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  const sqlite3_io_methods* m = Real(f)->pMethods;
  if (m->iVersion < 3 || m->xFetch == nullptr) {
    *out = nullptr;
    return SQLITE_OK;
  }
  return m->xFetch(Real(f), offset, amount, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 offset, void* p) {
  const sqlite3_io_methods* m = Real(f)->pMethods;
  if (m->iVersion < 3 || m->xUnfetch == nullptr) return SQLITE_OK;
  return m->xUnfetch(Real(f), offset, p);
}

// ---- WAL files: buffer contiguous writes; settle before anything else.

int WalWrite(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  WalBuffer* b = Wal(f);
  std::lock_guard lock(b->mu);
  if (b->deferred_error != SQLITE_OK) return SettleLocked(b);
  const auto size = static_cast<std::size_t>(amount);
  if (!b->data.empty() &&
      (offset != b->offset + static_cast<sqlite3_int64>(b->data.size()) ||
       b->data.size() + size > kMaxBuffered)) {
    if (int rc = FlushLocked(b); rc != SQLITE_OK) return rc;
  }
  if (size > kMaxBuffered) return b->real->pMethods->xWrite(b->real, data, amount, offset);
  if (b->data.empty()) {
    b->offset = offset;
    b->writer.store(&t_thread_tag, std::memory_order_relaxed);
    g_nonempty.fetch_add(1, std::memory_order_release);
  }
  b->data.append(static_cast<const char*>(data), size);
  if (b->commit_header) return FlushLocked(b);  // this was the commit frame's page
  b->commit_header = IsCommitFrameHeader(data, amount);
  return SQLITE_OK;
}

template <typename Fn>
int Settled(sqlite3_file* f, Fn forward) {
  WalBuffer* b = Wal(f);
  std::lock_guard lock(b->mu);
  if (int rc = SettleLocked(b); rc != SQLITE_OK) return rc;
  return forward(b->real);
}

int WalRead(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  return Settled(f, [&](sqlite3_file* r) { return r->pMethods->xRead(r, out, amount, offset); });
}
int WalTruncate(sqlite3_file* f, sqlite3_int64 size) {
  return Settled(f, [&](sqlite3_file* r) { return r->pMethods->xTruncate(r, size); });
}
int WalSync(sqlite3_file* f, int flags) {
  return Settled(f, [&](sqlite3_file* r) { return r->pMethods->xSync(r, flags); });
}
int WalFileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Settled(f, [&](sqlite3_file* r) { return r->pMethods->xFileSize(r, size); });
}
int WalFileControl(sqlite3_file* f, int op, void* arg) {
  return Settled(f, [&](sqlite3_file* r) { return r->pMethods->xFileControl(r, op, arg); });
}

constexpr sqlite3_io_methods kPlainMethods = {
    3,        Close,      Read,      Write,    Truncate,  Sync,
    FileSize, Lock,       Unlock,    CheckReservedLock,   FileControl,
    SectorSize, DeviceCharacteristics, ShmMap, ShmLock,   ShmBarrier,
    ShmUnmap, Fetch,      Unfetch};

constexpr sqlite3_io_methods kWalMethods = {
    3,           Close,     WalRead,   WalWrite, WalTruncate, WalSync,
    WalFileSize, Lock,      Unlock,    CheckReservedLock,     WalFileControl,
    SectorSize,  DeviceCharacteristics, ShmMap, ShmLock,      ShmBarrier,
    ShmUnmap,    Fetch,     Unfetch};

// ---- the VFS: opens wrap the real VFS's files; everything else forwards.

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  File* file = reinterpret_cast<File*>(f);
  file->base.pMethods = nullptr;
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  file->wal = nullptr;
  int rc = g_real->xOpen(g_real, name, file->real, flags, out_flags);
  if (rc != SQLITE_OK || file->real->pMethods == nullptr) {
    // Keep SQLite from calling our xClose: the real file is already closed.
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  if ((flags & SQLITE_OPEN_WAL) != 0) {
    file->wal = new WalBuffer;
    file->wal->real = file->real;
    std::lock_guard list_lock(g_list_mu);
    g_list->push_back(file->wal);
    file->base.pMethods = &kWalMethods;
  } else {
    file->base.pMethods = &kPlainMethods;
  }
  return SQLITE_OK;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_real->xFullPathname(g_real, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return g_real->xDlOpen(g_real, name); }
void DlError(sqlite3_vfs*, int n, char* out) { g_real->xDlError(g_real, n, out); }
void (*DlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return g_real->xDlSym(g_real, handle, symbol);
}
void DlClose(sqlite3_vfs*, void* handle) { g_real->xDlClose(g_real, handle); }
int Randomness(sqlite3_vfs*, int n, char* out) { return g_real->xRandomness(g_real, n, out); }
int Sleep(sqlite3_vfs*, int micros) { return g_real->xSleep(g_real, micros); }
int CurrentTime(sqlite3_vfs*, double* out) { return g_real->xCurrentTime(g_real, out); }
int GetLastError(sqlite3_vfs*, int n, char* out) {
  return g_real->xGetLastError(g_real, n, out);
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_real->xCurrentTimeInt64(g_real, out);
}
int SetSystemCall(sqlite3_vfs*, const char* name, sqlite3_syscall_ptr fn) {
  return g_real->xSetSystemCall(g_real, name, fn);
}
sqlite3_syscall_ptr GetSystemCall(sqlite3_vfs*, const char* name) {
  return g_real->xGetSystemCall(g_real, name);
}
const char* NextSystemCall(sqlite3_vfs*, const char* name) {
  return g_real->xNextSystemCall(g_real, name);
}

bool Register() {
  if (sqlite3_initialize() != SQLITE_OK) return false;
  g_real = sqlite3_vfs_find(nullptr);
  if (g_real == nullptr || g_real->iVersion < 3) return false;
  g_list = new std::vector<WalBuffer*>;
  g_vfs = sqlite3_vfs{};
  g_vfs.iVersion = 3;
  g_vfs.szOsFile = static_cast<int>(sizeof(File)) + g_real->szOsFile;
  g_vfs.mxPathname = g_real->mxPathname;
  g_vfs.zName = kVfsName;
  g_vfs.xOpen = Open;
  g_vfs.xDelete = Delete;
  g_vfs.xAccess = Access;
  g_vfs.xFullPathname = FullPathname;
  g_vfs.xDlOpen = DlOpen;
  g_vfs.xDlError = DlError;
  g_vfs.xDlSym = DlSym;
  g_vfs.xDlClose = DlClose;
  g_vfs.xRandomness = Randomness;
  g_vfs.xSleep = Sleep;
  g_vfs.xCurrentTime = CurrentTime;
  g_vfs.xGetLastError = GetLastError;
  g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  g_vfs.xSetSystemCall = SetSystemCall;
  g_vfs.xGetSystemCall = GetSystemCall;
  g_vfs.xNextSystemCall = NextSystemCall;
  return sqlite3_vfs_register(&g_vfs, 0) == SQLITE_OK;
}

}  // namespace

const char* CoalescingVfsName() {
  static const bool registered = Register();
  return registered ? kVfsName : nullptr;
}

}  // namespace grainstore
