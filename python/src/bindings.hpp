// python/src/bindings.hpp - what the two translation units of the `untold._untold`
// extension module share (docs/python.md): the exception the package raises
// and the helpers that turn library errors into it.
#pragma once

#include <string>
#include <string_view>

#include <pybind11/pybind11.h>

#include <untold/error.hpp>

namespace untold::python {

namespace py = pybind11;

/// untold.UntoldError(message, rule_id, context): set by the package's
/// __init__.py through _set_error_class before any call can fail.
py::object& error_class();

/// Raises UntoldError for a library error: its rule id, describe() and the
/// context fields as a dict.
[[noreturn]] void raise_error(const error& e);

/// Raises UntoldError for a tool's message; the rule id is the first
/// "ID name:" of the library's rule table the message contains (as
/// error::describe() writes it), else "" .
[[noreturn]] void raise_message(const std::string& message);

/// The first rule id named in `message` as describe() writes it, or "".
[[nodiscard]] std::string rule_in(std::string_view message);

void bind_asset(py::module_& m);     // asset.cpp: open, arrays, decode, planner
void bind_pipeline(py::module_& m);  // pipeline.cpp: validate, info, convert, cook, tiles, build

}  // namespace untold::python
