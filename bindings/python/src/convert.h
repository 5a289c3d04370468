// Conversions between Python objects and the binding core's types, for the
// areev._areev extension (Limited API 3.9). All functions need the GIL.
#ifndef AREEV_BINDINGS_PYTHON_SRC_CONVERT_H_
#define AREEV_BINDINGS_PYTHON_SRC_CONVERT_H_

#include <Python.h>

#include <string>
#include <string_view>

#include "binding_core.h"

namespace areev_py {

// The type name of obj (a new str reference); PyTypeObject is opaque here.
PyObject* TypeName(PyObject* obj);

// UTF-8 bytes of a str argument (new reference), or nullptr with TypeError
// ("{what} must be str, not T") or UnicodeEncodeError (lone surrogates) set.
PyObject* Utf8Of(PyObject* obj, const char* what);

// A flag argument: 0 when absent (nullptr), its truth for a bool or an int
// (as CPython's own flags such as open()'s closefd), else -1 with TypeError
// ("{what} must be bool, not T"): a str such as "no" would be true.
int FlagOf(PyObject* obj, const char* what);

// The contents of a bytes object, valid while it lives.
std::string_view ViewOf(PyObject* bytes);

// A str decoded from UTF-8 with the given error handler ("replace", ...).
PyObject* Str(const std::string& s, const char* errors);

// One history row as a dict (new reference), or nullptr with an exception set.
PyObject* VersionDict(const areev_binding::VersionRow& row);

// Converts read()'s `version` (None, int >= 1, or a grain-id prefix str) into
// the store's selector ("" for the current body); false with TypeError or
// ValueError set on bad input.
// `*by_number`: the version was an int, which names a version number only.
bool VersionSelector(PyObject* version, std::string* out, bool* by_number);

}  // namespace areev_py

#endif  // AREEV_BINDINGS_PYTHON_SRC_CONVERT_H_
