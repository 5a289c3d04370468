// areev._areev: the CPython extension behind the `areev` package. Written
// against the Limited API (Py_LIMITED_API=0x03090000) so one abi3 build loads
// in every CPython >= 3.9. A thin layer over areev_binding::Handle: argument
// checks and conversions here, all store work with the GIL released.
#include <Python.h>

#include <memory>
#include <string>
#include <string_view>

#include "binding_core.h"
#include "convert.h"

namespace {

using areev_binding::BindingError;
using areev_binding::ErrorKind;
using areev_binding::Handle;
using areev_py::FlagOf;
using areev_py::Str;
using areev_py::Utf8Of;
using areev_py::VersionDict;
using areev_py::VersionSelector;
using areev_py::ViewOf;

// Exception types, created once at import (the module is single-phase and
// cannot be re-initialised, so plain globals are safe).
PyObject* g_tool_error = nullptr;       // areev.ToolError(ValueError)
PyObject* g_not_found_error = nullptr;  // areev.NotFoundError(ValueError, LookupError)
PyObject* g_closed_error = nullptr;     // areev.ClosedError(RuntimeError)
PyObject* g_store_error = nullptr;      // areev.StoreError(OSError)

struct AreevObject {
  PyObject_HEAD
  Handle* handle;  // owned; deleted in dealloc, never while a call runs
  PyObject* path;  // the path as given (str or bytes)
  PyObject* ns;    // str
  // While __init__ opens the store with the GIL released: a second __init__
  // of the same object (another thread) is refused then too, not only once
  // the handle is set, or both would open one and one would leak.
  bool opening;
};

PyObject* Raise(const BindingError& error) {
  PyObject* type = PyExc_RuntimeError;
  switch (error.kind) {
    case ErrorKind::kTool: type = g_tool_error; break;
    case ErrorKind::kInvalid: type = PyExc_ValueError; break;
    case ErrorKind::kNotFound: type = g_not_found_error; break;
    case ErrorKind::kClosed: type = g_closed_error; break;
    case ErrorKind::kStore: type = g_store_error; break;
    case ErrorKind::kNone: break;
  }
  // A tool error is the model's text, as the tool_result content; other
  // messages show bytes that are not UTF-8 (a store path) as \xHH, as the
  // CLI does.
  const char* errors = error.kind == ErrorKind::kTool ? "replace" : "backslashreplace";
  PyObject* msg = PyUnicode_DecodeUTF8(error.message.data(),
                                       static_cast<Py_ssize_t>(error.message.size()), errors);
  if (msg == nullptr) return nullptr;
  const bool with_errno = error.kind == ErrorKind::kStore && error.sys_errno != 0;
  const bool with_detail = error.kind == ErrorKind::kTool && !error.detail.empty();
  if (!with_errno && !with_detail) {
    PyErr_SetObject(type, msg);
    Py_DECREF(msg);
    return nullptr;
  }
  // A StoreError with the errno behind it, or a ToolError with the store's
  // own message: set as an attribute, not passed as OSError(errno, msg) or a
  // second argument, so that str(e) stays the message alone.
  PyObject* exc = PyObject_CallFunctionObjArgs(type, msg, nullptr);
  Py_DECREF(msg);
  if (exc == nullptr) return nullptr;
  PyObject* value = with_errno ? PyLong_FromLong(error.sys_errno)
                               : PyUnicode_DecodeUTF8(error.detail.data(),
                                                      static_cast<Py_ssize_t>(error.detail.size()),
                                                      "backslashreplace");
  const char* attribute = with_errno ? "errno" : "detail";
  if (value == nullptr || PyObject_SetAttrString(exc, attribute, value) != 0) {
    Py_XDECREF(value);
    Py_DECREF(exc);
    return nullptr;
  }
  Py_DECREF(value);
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
  return nullptr;
}

int AreevInit(PyObject* self_obj, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<AreevObject*>(self_obj);
  static const char* kwlist[] = {"path", "ns", "durable", nullptr};
  PyObject* path_arg = nullptr;
  PyObject* ns_arg = nullptr;
  PyObject* durable_arg = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$O:Areev", const_cast<char**>(kwlist),
                                   &path_arg, &ns_arg, &durable_arg)) {
    return -1;
  }
  const int durable = FlagOf(durable_arg, "durable");
  if (durable < 0) return -1;
  if (self->handle != nullptr || self->opening) {
    PyErr_SetString(PyExc_RuntimeError, "Areev.__init__ called twice");
    return -1;
  }
  PyObject* fspath = PyOS_FSPath(path_arg);
  if (fspath == nullptr) return -1;
  PyObject* path_bytes = PyUnicode_Check(fspath) ? PyUnicode_EncodeFSDefault(fspath)
                                                 : (Py_INCREF(fspath), fspath);
  if (path_bytes == nullptr) {
    Py_DECREF(fspath);
    return -1;
  }
  PyObject* ns_bytes = nullptr;
  if (ns_arg == nullptr) {
    ns_arg = PyUnicode_FromString("default");
  } else {
    Py_INCREF(ns_arg);
  }
  ns_bytes = ns_arg ? Utf8Of(ns_arg, "ns") : nullptr;
  if (ns_bytes == nullptr) {
    Py_XDECREF(ns_arg);
    Py_DECREF(fspath);
    Py_DECREF(path_bytes);
    return -1;
  }
  // Again, now that no Python code (an __fspath__, a str subclass) can run
  // before `opening` is set: another thread may have begun meanwhile.
  if (self->handle != nullptr || self->opening) {
    Py_DECREF(ns_arg);
    Py_DECREF(fspath);
    Py_DECREF(path_bytes);
    Py_DECREF(ns_bytes);
    PyErr_SetString(PyExc_RuntimeError, "Areev.__init__ called twice");
    return -1;
  }
  std::string path(ViewOf(path_bytes));
  std::string_view ns = ViewOf(ns_bytes);
  BindingError error;
  std::unique_ptr<Handle> handle;
  if (path.find('\0') != std::string::npos) {
    error = {ErrorKind::kInvalid, "path must not contain NUL characters"};
  } else {
    self->opening = true;
    Py_BEGIN_ALLOW_THREADS
    handle = Handle::Open(path, ns, durable != 0, &error);
    Py_END_ALLOW_THREADS
    self->opening = false;
  }
  Py_DECREF(path_bytes);
  Py_DECREF(ns_bytes);
  if (!handle) {
    Py_DECREF(fspath);
    Py_DECREF(ns_arg);
    Raise(error);
    return -1;
  }
  self->handle = handle.release();
  self->path = fspath;
  self->ns = ns_arg;
  return 0;
}

void AreevDealloc(PyObject* self_obj) {
  auto* self = reinterpret_cast<AreevObject*>(self_obj);
  PyTypeObject* type = Py_TYPE(self_obj);
  if (self->handle != nullptr) {
    Handle* handle = self->handle;
    self->handle = nullptr;
    Py_BEGIN_ALLOW_THREADS
    delete handle;  // closes the store (waits for SQLite, so without the GIL)
    Py_END_ALLOW_THREADS
  }
  Py_CLEAR(self->path);
  Py_CLEAR(self->ns);
  auto free_fn = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free_fn(self_obj);
  Py_DECREF(type);
}

// The open handle, or nullptr with ClosedError set (also for an object whose
// __init__ failed or never ran).
Handle* HandleOf(PyObject* self_obj) {
  auto* self = reinterpret_cast<AreevObject*>(self_obj);
  if (self->handle == nullptr || self->handle->closed()) {
    PyErr_SetString(g_closed_error, "the Areev handle is closed");
    return nullptr;
  }
  return self->handle;
}

PyObject* AreevMemoryTool(PyObject* self, PyObject* arg) {
  Handle* handle = HandleOf(self);
  if (handle == nullptr) return nullptr;
  // A lone surrogate passes as its 3 bytes, which are not UTF-8: the tool
  // answers with its own error for them (ToolError "Input is not valid
  // UTF-8"), as the CLI and Node do, never with Python's codec message.
  if (arg != nullptr && !PyUnicode_Check(arg)) return Utf8Of(arg, "memory_tool() argument");
  PyObject* bytes = PyUnicode_AsEncodedString(arg, "utf-8", "surrogatepass");
  if (bytes == nullptr) return nullptr;
  std::string_view json = ViewOf(bytes);
  BindingError error;
  std::string content;
  Py_BEGIN_ALLOW_THREADS
  content = handle->MemoryTool(json, &error);
  Py_END_ALLOW_THREADS
  Py_DECREF(bytes);
  if (!error.ok()) return Raise(error);
  return Str(content, "replace");
}

PyObject* AreevHistory(PyObject* self, PyObject* arg) {
  Handle* handle = HandleOf(self);
  if (handle == nullptr) return nullptr;
  PyObject* bytes = Utf8Of(arg, "history() argument");
  if (bytes == nullptr) return nullptr;
  BindingError error;
  std::vector<areev_binding::VersionRow> rows;
  std::string_view path = ViewOf(bytes);
  Py_BEGIN_ALLOW_THREADS
  rows = handle->History(path, &error);
  Py_END_ALLOW_THREADS
  Py_DECREF(bytes);
  if (!error.ok()) return Raise(error);
  PyObject* list = PyList_New(0);
  if (list == nullptr) return nullptr;
  for (const auto& row : rows) {
    PyObject* d = VersionDict(row);
    if (d == nullptr || PyList_Append(list, d) != 0) {
      Py_XDECREF(d);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(d);
  }
  return list;
}

PyObject* DoRead(PyObject* self, PyObject* args, PyObject* kwargs, const char* fmt, bool as_bytes) {
  static const char* kwlist[] = {"path", "version", nullptr};
  PyObject* path_arg = nullptr;
  PyObject* version_arg = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, fmt, const_cast<char**>(kwlist), &path_arg,
                                   &version_arg)) {
    return nullptr;
  }
  Handle* handle = HandleOf(self);
  if (handle == nullptr) return nullptr;
  std::string version;
  bool by_number = false;
  if (!VersionSelector(version_arg, &version, &by_number)) return nullptr;
  PyObject* bytes = Utf8Of(path_arg, "path");
  if (bytes == nullptr) return nullptr;
  std::string_view path = ViewOf(bytes);
  BindingError error;
  std::string body;
  Py_BEGIN_ALLOW_THREADS
  body = handle->Read(path, version, &error, by_number);
  Py_END_ALLOW_THREADS
  Py_DECREF(bytes);
  if (!error.ok()) return Raise(error);
  if (as_bytes) return PyBytes_FromStringAndSize(body.data(), static_cast<Py_ssize_t>(body.size()));
  return Str(body, "surrogateescape");
}

PyObject* AreevRead(PyObject* self, PyObject* args, PyObject* kwargs) {
  return DoRead(self, args, kwargs, "O|O:read", false);
}

PyObject* AreevReadBytes(PyObject* self, PyObject* args, PyObject* kwargs) {
  return DoRead(self, args, kwargs, "O|O:read_bytes", true);
}

PyObject* AreevClose(PyObject* self_obj, PyObject*) {
  auto* self = reinterpret_cast<AreevObject*>(self_obj);
  if (self->handle != nullptr) {
    Handle* handle = self->handle;
    Py_BEGIN_ALLOW_THREADS
    handle->Close();
    Py_END_ALLOW_THREADS
  }
  Py_RETURN_NONE;
}

PyObject* AreevEnter(PyObject* self, PyObject*) {
  if (HandleOf(self) == nullptr) return nullptr;
  Py_INCREF(self);
  return self;
}

// __exit__(exc_type, exc, tb): three arguments, as the with statement passes
// them; any other count is a TypeError and leaves the handle open.
PyObject* AreevExit(PyObject* self, PyObject* args) {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  if (!PyArg_UnpackTuple(args, "__exit__", 3, 3, &type, &value, &tb)) return nullptr;
  PyObject* r = AreevClose(self, nullptr);
  if (r == nullptr) return nullptr;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

PyObject* AreevGetClosed(PyObject* self_obj, void*) {
  auto* self = reinterpret_cast<AreevObject*>(self_obj);
  return PyBool_FromLong(self->handle == nullptr || self->handle->closed());
}

PyObject* AreevGetAttr(PyObject* self_obj, void* which) {
  auto* self = reinterpret_cast<AreevObject*>(self_obj);
  PyObject* v = which != nullptr ? self->ns : self->path;
  if (v == nullptr) Py_RETURN_NONE;
  Py_INCREF(v);
  return v;
}

PyObject* AreevRepr(PyObject* self_obj) {
  auto* self = reinterpret_cast<AreevObject*>(self_obj);
  const char* state = (self->handle == nullptr || self->handle->closed()) ? " closed" : "";
  if (self->path == nullptr || self->ns == nullptr) return PyUnicode_FromString("<areev.Areev>");
  return PyUnicode_FromFormat("<areev.Areev %R ns=%R%s>", self->path, self->ns, state);
}

PyMethodDef kAreevMethods[] = {
    {"memory_tool", AreevMemoryTool, METH_O,
     "memory_tool(json: str) -> str\n\nRuns one memory-tool command given as JSON text and "
     "returns the tool_result content. A tool error raises ToolError (a ValueError) whose "
     "str() is the bare message."},
    {"history", AreevHistory, METH_O,
     "history(path: str) -> list[dict]\n\nVersions of a memory file, oldest first."},
    {"read", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(AreevRead)),
     METH_VARARGS | METH_KEYWORDS,
     "read(path: str, version: int | str | None = None) -> str\n\nThe current body, or one "
     "version (number or grain-id prefix). Undecodable bytes come back as surrogate escapes."},
    {"read_bytes", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(AreevReadBytes)),
     METH_VARARGS | METH_KEYWORDS, "read_bytes(path, version=None) -> bytes"},
    {"close", AreevClose, METH_NOARGS, "close() -> None\n\nCloses the store. Idempotent."},
    {"__enter__", AreevEnter, METH_NOARGS, nullptr},
    {"__exit__", AreevExit, METH_VARARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kAreevGetSet[] = {
    {"closed", AreevGetClosed, nullptr, "True once close() was called.", nullptr},
    {"path", AreevGetAttr, nullptr, "The store file path as given.", nullptr},
    {"ns", AreevGetAttr, nullptr, "The namespace.", reinterpret_cast<void*>(1)},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot kAreevSlots[] = {
    {Py_tp_doc, const_cast<char*>(
                    "Areev(path, ns='default', *, durable=False)\n\nAn open areev store and "
                    "one namespace of it. Thread-safe: threads may share one handle.")},
    {Py_tp_init, reinterpret_cast<void*>(AreevInit)},
    {Py_tp_new, reinterpret_cast<void*>(PyType_GenericNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(AreevDealloc)},
    {Py_tp_methods, kAreevMethods},
    {Py_tp_getset, kAreevGetSet},
    {Py_tp_repr, reinterpret_cast<void*>(AreevRepr)},
    {0, nullptr},
};

PyType_Spec kAreevSpec = {
    "areev.Areev", sizeof(AreevObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, kAreevSlots,
};

PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT, "areev._areev",
    "Native core of the areev package (see areev.Areev).", -1, nullptr, nullptr, nullptr,
    nullptr, nullptr,
};

bool AddException(PyObject* module, const char* name, const char* qualname, PyObject* bases,
                  const char* doc, PyObject** slot, PyObject* dict = nullptr) {
  *slot = PyErr_NewExceptionWithDoc(qualname, doc, bases, dict);
  if (*slot == nullptr) return false;
  Py_INCREF(*slot);
  if (PyModule_AddObject(module, name, *slot) != 0) {
    Py_DECREF(*slot);
    return false;
  }
  return true;
}

}  // namespace

PyMODINIT_FUNC PyInit__areev(void) {
  PyObject* module = PyModule_Create(&kModule);
  if (module == nullptr) return nullptr;
  PyObject* type = PyType_FromSpec(&kAreevSpec);
  PyObject* nf_bases = PyTuple_Pack(2, PyExc_ValueError, PyExc_LookupError);
  // ToolError.detail: None unless a store failure set it on the instance.
  PyObject* tool_dict = Py_BuildValue("{s:O}", "detail", Py_None);
  bool ok = type != nullptr && nf_bases != nullptr && tool_dict != nullptr &&
            PyModule_AddObject(module, "Areev", (Py_INCREF(type), type)) == 0 &&
            AddException(module, "ToolError", "areev.ToolError", PyExc_ValueError,
                         "A memory-tool command failed; str(e) is the bare message. For "
                         "'Storage operation failed ...', detail is the store's own message "
                         "(for a log; None otherwise).",
                         &g_tool_error, tool_dict) &&
            AddException(module, "NotFoundError", "areev.NotFoundError", nf_bases,
                         "No such memory file, version or history.", &g_not_found_error) &&
            AddException(module, "ClosedError", "areev.ClosedError", PyExc_RuntimeError,
                         "The Areev handle was used after close().", &g_closed_error) &&
            AddException(module, "StoreError", "areev.StoreError", PyExc_OSError,
                         "The store failed (I/O error, busy past the timeout, corruption).",
                         &g_store_error);
  Py_XDECREF(type);
  Py_XDECREF(nf_bases);
  Py_XDECREF(tool_dict);
  if (!ok) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
