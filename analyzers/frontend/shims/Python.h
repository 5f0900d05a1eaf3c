// kernelvet shim: Python.h. Extensions include it for module registration only; nothing of
// CPython reaches the kernels or their launchers.
#pragma once
typedef struct _object PyObject;
