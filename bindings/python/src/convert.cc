#include "convert.h"

namespace areev_py {

// The type name of obj (a new str reference); PyTypeObject is opaque here.
PyObject* TypeName(PyObject* obj) {
  return PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__name__");
}

// UTF-8 bytes of a str argument, or nullptr with TypeError / UnicodeEncodeError set.
namespace {

// Sets TypeError "{what} must be {expected}, not T" for `obj` of type T.
void SetWrongType(PyObject* obj, const char* what, const char* expected) {
  PyObject* name = TypeName(obj);
  if (name == nullptr) return;
  PyErr_Format(PyExc_TypeError, "%s must be %s, not %U", what, expected, name);
  Py_DECREF(name);
}

}  // namespace

PyObject* Utf8Of(PyObject* obj, const char* what) {
  if (!PyUnicode_Check(obj)) {
    SetWrongType(obj, what, "str");
    return nullptr;
  }
  return PyUnicode_AsUTF8String(obj);
}

int FlagOf(PyObject* obj, const char* what) {
  if (obj == nullptr) return 0;
  if (!PyLong_Check(obj)) {  // bool is an int
    SetWrongType(obj, what, "bool");
    return -1;
  }
  return PyObject_IsTrue(obj);
}

std::string_view ViewOf(PyObject* bytes) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  PyBytes_AsStringAndSize(bytes, &data, &size);
  return {data, static_cast<std::size_t>(size)};
}

PyObject* Str(const std::string& s, const char* errors) {
  return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), errors);
}

PyObject* VersionDict(const areev_binding::VersionRow& row) {
  PyObject* d = PyDict_New();
  if (d == nullptr) return nullptr;
  struct Item {
    const char* key;
    PyObject* value;
  } items[] = {
      {"version", PyLong_FromUnsignedLong(row.version)},
      {"grain_id", Str(row.grain_id, "replace")},
      {"created", Str(row.created, "replace")},
      {"created_ns", PyLong_FromLongLong(row.created_ns)},
      {"size", PyLong_FromUnsignedLongLong(row.size)},
      {"op", Str(row.op, "replace")},
      {"subject", Str(row.subject, "replace")},
      {"transient", PyBool_FromLong(row.transient ? 1 : 0)},
      {"purged", PyBool_FromLong(row.purged ? 1 : 0)},
      {"chain_state", Str(row.chain_state, "replace")},
  };
  bool ok = true;
  for (const Item& item : items) {
    if (item.value == nullptr || PyDict_SetItemString(d, item.key, item.value) != 0) ok = false;
    Py_XDECREF(item.value);
  }
  if (!ok) {
    Py_DECREF(d);
    return nullptr;
  }
  return d;
}

// Converts read()'s `version` (None, int >= 1, or a grain-id prefix str) into
// the store's selector; false with an exception set on bad input.
bool VersionSelector(PyObject* version, std::string* out, bool* by_number) {
  *by_number = false;
  if (version == nullptr || version == Py_None) return true;
  if (PyBool_Check(version)) {
    PyErr_SetString(PyExc_TypeError, "version must be an int, a str or None, not bool");
    return false;
  }
  if (PyLong_Check(version)) {
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(version, &overflow);
    if (n == -1 && PyErr_Occurred()) return false;
    if (overflow < 0 || (overflow == 0 && n < 1)) {
      PyErr_Format(PyExc_ValueError, "version must be >= 1, got %S", version);
      return false;
    }
    *by_number = true;  // a number, never a grain-id prefix of digits
    if (overflow == 0) {
      *out = std::to_string(n);
      return true;
    }
    // Past 64 bits: no such version, which the store says like for any other.
    PyObject* digits = PyObject_Str(version);
    if (digits == nullptr) {
      // More digits than Python converts (sys.get_int_max_str_digits): the
      // store's NotFound names the number by its size instead.
      if (!PyErr_ExceptionMatches(PyExc_ValueError)) return false;
      PyErr_Clear();
      PyObject* bits = PyObject_CallMethod(version, "bit_length", nullptr);
      if (bits == nullptr) return false;
      const long long n = PyLong_AsLongLong(bits);
      Py_DECREF(bits);
      if (n == -1 && PyErr_Occurred()) return false;
      *out = "of " + std::to_string(n) + " bits";
      return true;
    }
    PyObject* bytes = Utf8Of(digits, "version");
    Py_DECREF(digits);
    if (bytes == nullptr) return false;
    *out = std::string(ViewOf(bytes));
    Py_DECREF(bytes);
    return true;
  }
  PyObject* bytes = Utf8Of(version, "version");
  if (bytes == nullptr) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      SetWrongType(version, "version", "an int, a str or None");
    }
    return false;
  }
  *out = std::string(ViewOf(bytes));
  Py_DECREF(bytes);
  if (out->empty()) {
    PyErr_SetString(PyExc_ValueError, "version must not be empty");
    return false;
  }
  return true;
}

}  // namespace areev_py
