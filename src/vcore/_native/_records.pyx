# cython: language_level=3, boundscheck=False, wraparound=False
"""Result records made in bulk.

A scheduling cycle returns one Placement per pod it binds: tens of thousands of small named tuples. Python's
NamedTuple constructor builds each through an intermediate tuple and a Python frame (about 270 ns); here each record
is one allocation of the tuple subtype with its items set in place (about 100 ns). The record type is passed in, so
this module imports nothing from vcore.
"""

from cpython.ref cimport PyObject, Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM

cdef extern from "Python.h":
    ctypedef struct PyTypeObject:
        PyObject* (*tp_alloc)(PyTypeObject*, Py_ssize_t)
    # The reference tp_alloc returns becomes the object's own (no extra increment).
    object _owned "(PyObject*)"(PyObject*)

__all__ = ["placements"]


cdef inline object _record7(PyTypeObject* t, object a, object b, object c, object d, object e, object f,
                            object g):
    cdef PyObject* p = t.tp_alloc(t, 7)
    if p == NULL:
        raise MemoryError()
    record = _owned(p)
    Py_INCREF(a)
    PyTuple_SET_ITEM(record, 0, a)
    Py_INCREF(b)
    PyTuple_SET_ITEM(record, 1, b)
    Py_INCREF(c)
    PyTuple_SET_ITEM(record, 2, c)
    Py_INCREF(d)
    PyTuple_SET_ITEM(record, 3, d)
    Py_INCREF(e)
    PyTuple_SET_ITEM(record, 4, e)
    Py_INCREF(f)
    PyTuple_SET_ITEM(record, 5, f)
    Py_INCREF(g)
    PyTuple_SET_ITEM(record, 6, g)
    return record


def placements(type cls, list pods, list slots, list names, list gpus):
    """``cls(pods[i].key, names[slots[i]], {}, "", gpus[i], None, None)`` for every i, as a list. ``cls`` must be a
    7-field tuple subtype without instance dict (a NamedTuple such as vcore.Placement). The pods' keys are read
    here, in the same pass: a list of keys made per job was one more pass over pods no longer in cache."""
    if not issubclass(cls, tuple) or getattr(cls, "_fields", None) is None or len(cls._fields) != 7:
        raise TypeError(f"placements: {cls.__name__} is not a 7-field named tuple")
    cdef Py_ssize_t i, n = len(pods)
    if len(slots) != n or len(gpus) != n:
        raise ValueError(f"placements: {n} pods, {len(slots)} slots, {len(gpus)} GPU choices")
    cdef PyTypeObject* t = <PyTypeObject*>cls
    cdef list out = [None] * n
    cdef str message = ""
    cdef object key
    for i in range(n):
        key = pods[i].key
        if type(key) is not str:
            raise TypeError(f"placements: pods[{i}].key is {type(key).__name__}, not str")
        out[i] = _record7(t, key, names[slots[i]], {}, message, gpus[i], None, None)
    return out
