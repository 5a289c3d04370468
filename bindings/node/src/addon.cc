// areev.node: the N-API addon behind @areev/areev. Exposes one class, Handle,
// over areev_binding::Handle. The constructor opens the store synchronously;
// every store call runs on the libuv thread pool (napi_create_async_work) and
// settles a promise. Uses plain node_api.h (N-API 8), so one build loads in
// any Node >= 16 of the same platform.
#define NAPI_VERSION 8
#include <node_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "binding_core.h"
#include "grainstore/path.h"

namespace {

using areev_binding::BindingError;
using areev_binding::ErrorKind;
using areev_binding::Handle;

const char* CodeOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kTool: return "ERR_AREEV_TOOL";
    case ErrorKind::kInvalid: return "ERR_AREEV_INVALID";
    case ErrorKind::kNotFound: return "ERR_AREEV_NOT_FOUND";
    case ErrorKind::kClosed: return "ERR_AREEV_CLOSED";
    case ErrorKind::kStore: return "ERR_AREEV_STORE";
    case ErrorKind::kNone: break;
  }
  return "ERR_AREEV";
}

// A JS string of `s`; nullptr, with no exception left pending, when V8
// cannot hold it (past about 512 Mi characters).
napi_value MakeString(napi_env env, const std::string& s) {
  napi_value v = nullptr;
  if (napi_create_string_utf8(env, s.data(), s.size(), &v) == napi_ok) return v;
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
    napi_value ignored = nullptr;
    napi_get_and_clear_last_exception(env, &ignored);
  }
  return nullptr;
}

// Messages kept whole up to this many bytes; a longer one (a tool error that
// lists millions of line numbers) is cut, saying how long it was.
constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 20;

napi_value MakeErrorWithCode(napi_env env, const char* code_text, const std::string& message) {
  napi_value msg = message.size() <= kMaxMessageBytes ? MakeString(env, message) : nullptr;
  if (msg == nullptr) {
    std::size_t cut = std::min(message.size(), kMaxMessageBytes);
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
    msg = MakeString(env, message.substr(0, cut) + "... (" + std::to_string(message.size()) +
                              " bytes in all)");
  }
  napi_value err = nullptr;
  napi_create_error(env, MakeString(env, code_text), msg, &err);
  return err;
}

// Error(message) with .code, .errno for a store error with the system's
// reason behind it (as Python's StoreError.errno), and .detail for a tool
// error with the store's own message behind it; a TypeError for kind ==
// kNone used as "type".
napi_value MakeError(napi_env env, const BindingError& error) {
  napi_value err = MakeErrorWithCode(env, CodeOf(error.kind), error.message);
  if (err != nullptr && error.kind == ErrorKind::kStore && error.sys_errno != 0) {
    napi_value number = nullptr;
    if (napi_create_int32(env, error.sys_errno, &number) == napi_ok) {
      napi_set_named_property(env, err, "errno", number);
    }
  }
  if (error.detail.empty() || err == nullptr) return err;
  if (napi_value detail = MakeString(env, error.detail); detail != nullptr) {
    napi_set_named_property(env, err, "detail", detail);
  }
  return err;
}

napi_value MakeTypeError(napi_env env, const std::string& message) {
  napi_value err = nullptr;
  napi_value code = MakeString(env, "ERR_INVALID_ARG_TYPE");
  napi_create_type_error(env, code, MakeString(env, message), &err);
  return err;
}

void ThrowValue(napi_env env, napi_value err) { napi_throw(env, err); }

// `units` (UTF-16) as UTF-8, except that a lone surrogate is encoded as
// such (WTF-8): bytes that are not UTF-8, so the store's checks refuse them
// ("Input is not valid UTF-8") instead of taking U+FFFD for them.
std::string Wtf8Of(const std::u16string& units) {
  std::string out;
  out.reserve(units.size() * 3);
  for (std::size_t i = 0; i < units.size(); ++i) {
    std::uint32_t c = units[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < units.size() && units[i + 1] >= 0xDC00 &&
        units[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (units[++i] - 0xDC00);
    }
    grainstore::AppendUtf8(&out, c);
  }
  return out;
}

// Reads a JS string argument; false (and nothing thrown) if it is not a string.
bool GetString(napi_env env, napi_value value, std::string* out) {
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_string) return false;
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, nullptr, 0, &len) != napi_ok) return false;
  out->assign(len, '\0');
  size_t copied = 0;
  napi_get_value_string_utf8(env, value, out->data(), len + 1, &copied);
  out->resize(copied);
  // V8 writes U+FFFD for a lone surrogate; only then is the UTF-16 read too.
  if (out->find("\xEF\xBF\xBD") != std::string::npos) {
    size_t units = 0;
    if (napi_get_value_string_utf16(env, value, nullptr, 0, &units) != napi_ok) return false;
    std::u16string text(units, u'\0');
    napi_get_value_string_utf16(env, value, text.data(), units + 1, &units);
    text.resize(units);
    *out = Wtf8Of(text);
  }
  return true;
}

// Whether `text` (GetString's output) holds a lone surrogate: WTF-8 encodes one
// as ED A0..BF xx, bytes that well-formed UTF-8 never contains.
bool HasLoneSurrogate(const std::string& text) {
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) == 0xED &&
        (static_cast<unsigned char>(text[i + 1]) & 0xE0) == 0xA0) {
      return true;
    }
  }
  return false;
}

// The refusal of a file path, namespace, memory path or version holding a
// lone surrogate. Such a string has no UTF-8 form (Python refuses it with
// UnicodeEncodeError): a file made under its WTF-8 bytes is one Node's fs,
// which writes U+FFFD for it, cannot find, and in a memory path it could
// only fail later with a garbled message. A command's JSON keeps the
// memory tool's own refusal ("Input is not valid UTF-8", as the CLI gives).
std::optional<BindingError> IllFormedArgument(const std::string& text, const char* name) {
  if (!HasLoneSurrogate(text)) return std::nullopt;
  return BindingError{ErrorKind::kInvalid,
                      std::string(name) + " must not contain a lone UTF-16 surrogate"};
}

napi_valuetype TypeOf(napi_env env, napi_value value) {
  napi_valuetype type = napi_undefined;
  napi_typeof(env, value, &type);
  return type;
}

// The wrapped Handle of `this`.
Handle* Unwrap(napi_env env, napi_value self) {
  void* data = nullptr;
  if (napi_unwrap(env, self, &data) != napi_ok) return nullptr;
  return static_cast<Handle*>(data);
}

// ---- async calls -----------------------------------------------------------

enum class Op : std::uint8_t { kMemoryTool, kHistory, kRead, kReadBytes };

struct Call {
  Op op;
  std::unique_ptr<Handle> pinned;  // keeps the store open until the call ends
  std::string arg1;                // json or path
  std::string arg2;                // version selector
  bool by_number = false;          // arg2 came from a number
  napi_deferred deferred = nullptr;
  napi_async_work work = nullptr;
  // results
  BindingError error;
  std::string text;
  std::vector<areev_binding::VersionRow> rows;
};

void Execute(napi_env, void* data) {
  auto* call = static_cast<Call*>(data);
  switch (call->op) {
    case Op::kMemoryTool:
      call->text = call->pinned->MemoryTool(call->arg1, &call->error);
      break;
    case Op::kHistory:
      call->rows = call->pinned->History(call->arg1, &call->error);
      break;
    case Op::kRead:
    case Op::kReadBytes:
      call->text = call->pinned->Read(call->arg1, call->arg2, &call->error, call->by_number);
      break;
  }
  call->pinned.reset();  // the last pin of a closed handle closes the store here
}

void SetProp(napi_env env, napi_value obj, const char* key, napi_value value) {
  napi_set_named_property(env, obj, key, value);
}

napi_value RowsToArray(napi_env env, const std::vector<areev_binding::VersionRow>& rows) {
  napi_value arr = nullptr;
  napi_create_array_with_length(env, rows.size(), &arr);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    napi_value obj = nullptr, v = nullptr;
    napi_create_object(env, &obj);
    napi_create_uint32(env, r.version, &v);
    SetProp(env, obj, "version", v);
    SetProp(env, obj, "grainId", MakeString(env, r.grain_id));
    SetProp(env, obj, "created", MakeString(env, r.created));
    napi_create_bigint_int64(env, r.created_ns, &v);
    SetProp(env, obj, "createdNs", v);
    napi_create_double(env, static_cast<double>(r.size), &v);
    SetProp(env, obj, "size", v);
    SetProp(env, obj, "op", MakeString(env, r.op));
    SetProp(env, obj, "subject", MakeString(env, r.subject));
    napi_get_boolean(env, r.transient, &v);
    SetProp(env, obj, "transient", v);
    napi_get_boolean(env, r.purged, &v);
    SetProp(env, obj, "purged", v);
    SetProp(env, obj, "chainState", MakeString(env, r.chain_state));
    napi_set_element(env, arr, static_cast<uint32_t>(i), obj);
  }
  return arr;
}

void Complete(napi_env env, napi_status status, void* data) {
  std::unique_ptr<Call> call(static_cast<Call*>(data));
  if (status != napi_ok) {
    napi_reject_deferred(env, call->deferred,
                         MakeError(env, {ErrorKind::kStore, "the call was cancelled"}));
  } else if (!call->error.ok()) {
    napi_reject_deferred(env, call->deferred, MakeError(env, call->error));
  } else if (call->op == Op::kHistory) {
    napi_resolve_deferred(env, call->deferred, RowsToArray(env, call->rows));
  } else if (call->op == Op::kReadBytes) {
    // The body's bytes as stored, whatever their encoding (a Buffer).
    napi_value buffer = nullptr;
    if (napi_create_buffer_copy(env, call->text.size(), call->text.data(), nullptr, &buffer) ==
        napi_ok) {
      napi_resolve_deferred(env, call->deferred, buffer);
    } else {
      napi_reject_deferred(env, call->deferred,
                           MakeError(env, {ErrorKind::kStore, "could not make a Buffer"}));
    }
  } else if (napi_value text = MakeString(env, call->text); text != nullptr) {
    napi_resolve_deferred(env, call->deferred, text);
  } else {
    napi_reject_deferred(env, call->deferred,
                         MakeErrorWithCode(env, "ERR_AREEV_TOO_LARGE",
                                           "the result is " + std::to_string(call->text.size()) +
                                               " bytes, more than a JavaScript string holds"));
  }
  napi_delete_async_work(env, call->work);
}

// Starts `call` on the thread pool, or rejects at once if the handle is closed.
napi_value Start(napi_env env, Handle* handle, std::unique_ptr<Call> call) {
  napi_value promise = nullptr;
  napi_create_promise(env, &call->deferred, &promise);
  BindingError error;
  call->pinned = handle != nullptr ? handle->Pin(&error) : nullptr;
  if (!call->pinned) {
    if (error.ok()) error = {ErrorKind::kClosed, "the Areev handle is closed"};
    napi_reject_deferred(env, call->deferred, MakeError(env, error));
    return promise;
  }
  napi_value name = MakeString(env, "areev");
  napi_create_async_work(env, nullptr, name, Execute, Complete, call.get(), &call->work);
  if (napi_queue_async_work(env, call->work) != napi_ok) {
    napi_reject_deferred(env, call->deferred,
                         MakeError(env, {ErrorKind::kStore, "could not queue the call"}));
    napi_delete_async_work(env, call->work);
    return promise;
  }
  call.release();  // owned by Complete now
  return promise;
}

napi_value RejectedWith(napi_env env, napi_value err) {
  napi_deferred deferred = nullptr;
  napi_value promise = nullptr;
  napi_create_promise(env, &deferred, &promise);
  napi_reject_deferred(env, deferred, err);
  return promise;
}

// Gets `this` and up to N arguments (missing ones are undefined).
template <size_t N>
napi_value Args(napi_env env, napi_callback_info info, napi_value (&argv)[N]) {
  size_t argc = N;
  napi_value self = nullptr;
  napi_get_cb_info(env, info, &argc, argv, &self, nullptr);
  napi_value undefined = nullptr;
  napi_get_undefined(env, &undefined);
  for (size_t i = argc; i < N; ++i) argv[i] = undefined;
  return self;
}

napi_value MemoryTool(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  napi_value self = Args(env, info, argv);
  auto call = std::make_unique<Call>();
  call->op = Op::kMemoryTool;
  if (!GetString(env, argv[0], &call->arg1)) {
    return RejectedWith(env, MakeTypeError(env, "memoryTool() expects the command as a JSON string"));
  }
  return Start(env, Unwrap(env, self), std::move(call));
}

napi_value History(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  napi_value self = Args(env, info, argv);
  auto call = std::make_unique<Call>();
  call->op = Op::kHistory;
  if (!GetString(env, argv[0], &call->arg1)) {
    return RejectedWith(env, MakeTypeError(env, "history() expects a path string"));
  }
  if (auto bad = IllFormedArgument(call->arg1, "path")) {
    return RejectedWith(env, MakeError(env, *bad));
  }
  return Start(env, Unwrap(env, self), std::move(call));
}

// read() and readBytes(): the same arguments, a string or a Buffer.
napi_value ReadAs(napi_env env, napi_callback_info info, Op op) {
  napi_value argv[2];
  napi_value self = Args(env, info, argv);
  auto call = std::make_unique<Call>();
  call->op = op;
  if (!GetString(env, argv[0], &call->arg1)) {
    return RejectedWith(env, MakeTypeError(env, op == Op::kRead
                                                    ? "read() expects a path string"
                                                    : "readBytes() expects a path string"));
  }
  if (auto bad = IllFormedArgument(call->arg1, "path")) {
    return RejectedWith(env, MakeError(env, *bad));
  }
  napi_valuetype vt = TypeOf(env, argv[1]);
  if (vt == napi_number) {
    double n = 0;
    napi_get_value_double(env, argv[1], &n);
    // Any safe integer: one past the file's versions is NotFound, as in Python.
    if (!(n >= 1) || n > 9007199254740991.0 ||
        n != static_cast<double>(static_cast<std::int64_t>(n))) {
      return RejectedWith(env, MakeError(env, {ErrorKind::kInvalid,
                                               "version must be an integer from 1 to "
                                               "Number.MAX_SAFE_INTEGER"}));
    }
    call->arg2 = std::to_string(static_cast<std::int64_t>(n));
    call->by_number = true;
  } else if (vt == napi_string) {
    GetString(env, argv[1], &call->arg2);
    if (call->arg2.empty()) {
      return RejectedWith(env, MakeError(env, {ErrorKind::kInvalid, "version must not be empty"}));
    }
    if (auto bad = IllFormedArgument(call->arg2, "version")) {
      return RejectedWith(env, MakeError(env, *bad));
    }
  } else if (vt != napi_undefined && vt != napi_null) {
    return RejectedWith(env, MakeTypeError(env, "version must be a number, a string or null"));
  }
  return Start(env, Unwrap(env, self), std::move(call));
}

napi_value Read(napi_env env, napi_callback_info info) { return ReadAs(env, info, Op::kRead); }

napi_value ReadBytes(napi_env env, napi_callback_info info) {
  return ReadAs(env, info, Op::kReadBytes);
}

// Drops `pin` on the thread pool: when it is the store's last reference,
// closing the store (joining its threads, SQLite's last checkpoint, which
// can take hundreds of milliseconds after large writes) happens there, not
// on the event loop. Inline only if the work cannot be queued.
void ReleaseOffTheLoop(napi_env env, std::unique_ptr<Handle> pin) {
  if (!pin) return;
  struct Release {
    std::unique_ptr<Handle> pin;
    napi_async_work work = nullptr;
  };
  auto release = std::make_unique<Release>();
  release->pin = std::move(pin);
  napi_value name = MakeString(env, "areev.close");
  const auto execute = [](napi_env, void* data) { static_cast<Release*>(data)->pin.reset(); };
  const auto complete = [](napi_env env, napi_status, void* data) {
    std::unique_ptr<Release> done(static_cast<Release*>(data));
    napi_delete_async_work(env, done->work);
  };
  if (name == nullptr ||
      napi_create_async_work(env, nullptr, name, execute, complete, release.get(),
                             &release->work) != napi_ok) {
    return;  // `release` drops the pin here
  }
  if (napi_queue_async_work(env, release->work) != napi_ok) {
    napi_delete_async_work(env, release->work);
    return;
  }
  release.release();  // owned by `complete` now
}

napi_value Close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  napi_value self = Args(env, info, argv);
  Handle* handle = Unwrap(env, self);
  if (handle != nullptr) {
    BindingError ignored;
    std::unique_ptr<Handle> pin = handle->Pin(&ignored);  // null once closed
    handle->Close();
    ReleaseOffTheLoop(env, std::move(pin));
  }
  napi_value undefined = nullptr;
  napi_get_undefined(env, &undefined);
  return undefined;
}

napi_value GetClosed(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  napi_value self = Args(env, info, argv);
  Handle* handle = Unwrap(env, self);
  napi_value result = nullptr;
  napi_get_boolean(env, handle == nullptr || handle->closed(), &result);
  return result;
}

// What V8 is told an open handle costs beyond its small JS object: the
// store's connection (descriptors, a page cache that grows to megabytes).
// Without it, handles dropped without close() pile up unseen by the garbage
// collector until the process runs out of descriptors.
constexpr std::int64_t kHandleExternalBytes = std::int64_t{8} << 20;

void Finalize(napi_env env, void* data, void*) {
  delete static_cast<Handle*>(data);
  std::int64_t total = 0;
  napi_adjust_external_memory(env, -kHandleExternalBytes, &total);
}

// new Handle(path: string, ns: string, durable: boolean)
napi_value Construct(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  napi_value self = Args(env, info, argv);
  std::string path, ns;
  if (!GetString(env, argv[0], &path)) {
    ThrowValue(env, MakeTypeError(env, "path must be a string"));
    return nullptr;
  }
  if (!GetString(env, argv[1], &ns)) {
    ThrowValue(env, MakeTypeError(env, "ns must be a string"));
    return nullptr;
  }
  bool durable = false;
  if (TypeOf(env, argv[2]) == napi_boolean) napi_get_value_bool(env, argv[2], &durable);
  BindingError error;
  std::unique_ptr<Handle> handle;
  if (path.find('\0') != std::string::npos) {
    error = {ErrorKind::kInvalid, "path must not contain NUL characters"};
  } else if (auto bad = IllFormedArgument(path, "path")) {
    error = *bad;
  } else if (auto bad_ns = IllFormedArgument(ns, "ns")) {
    error = *bad_ns;
  } else {
    handle = Handle::Open(path, ns, durable, &error);
  }
  if (!handle) {
    ThrowValue(env, MakeError(env, error));
    return nullptr;
  }
  if (napi_wrap(env, self, handle.get(), Finalize, nullptr, nullptr) != napi_ok) {
    ThrowValue(env, MakeError(env, {ErrorKind::kStore, "could not wrap the handle"}));
    return nullptr;
  }
  handle.release();
  std::int64_t total = 0;
  napi_adjust_external_memory(env, kHandleExternalBytes, &total);
  return self;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"memoryTool", nullptr, MemoryTool, nullptr, nullptr, nullptr, napi_default_method, nullptr},
      {"history", nullptr, History, nullptr, nullptr, nullptr, napi_default_method, nullptr},
      {"read", nullptr, Read, nullptr, nullptr, nullptr, napi_default_method, nullptr},
      {"readBytes", nullptr, ReadBytes, nullptr, nullptr, nullptr, napi_default_method, nullptr},
      {"close", nullptr, Close, nullptr, nullptr, nullptr, napi_default_method, nullptr},
      {"closed", nullptr, nullptr, GetClosed, nullptr, nullptr, napi_enumerable, nullptr},
  };
  napi_value cls = nullptr;
  if (napi_define_class(env, "Handle", NAPI_AUTO_LENGTH, Construct, nullptr,
                        sizeof(props) / sizeof(props[0]), props, &cls) != napi_ok) {
    return nullptr;
  }
  napi_set_named_property(env, exports, "Handle", cls);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
