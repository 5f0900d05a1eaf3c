"""An op's relations (conditions over 1-D index tensors' elements) checked and resolved for one
instance; both manifest versions read them the same way."""
from __future__ import annotations

from analyzers import binding as B

ABSENT = -1  # ndims of an argument the binding passes as absent: its relations do not apply

_INT_DTYPES = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"}


def instance_relations(texts, where, display: str, ndims: dict, args: dict, names_of: dict, env: dict, used: set,
                       user_names, model: str) -> tuple:
    """The relations, tensors renamed to launcher parameters and model fields substituted.

    ``where(k)``: the file:line:col of relation k; ``ndims``: argument key -> dimensions (None: not
    a tensor, ABSENT: bound as absent); ``args``: parameter name -> this instance's B.Arg; ``names_of``: key -> parameter.
    A relation that names a tensor absent from this instance does not apply to it. Raises
    ValueError with the place and the mistake.
    """
    out = []
    for k, text in enumerate(texts):
        try:
            e = B.parse_relation(text)
        except B.ExprError as exc:
            raise ValueError(f"{where(k)}: {exc}") from None
        applies = True
        for el in sorted(B.elems(e), key=lambda x: (x.tensor, x.offset)):
            n = ndims.get(el.tensor)
            if n == ABSENT:
                applies = False
                continue
            if n is None:
                raise ValueError(f"{where(k)}: {display}: relation {text!r} names '{el.tensor}', which is not a "
                                 "tensor argument of the op")
            if n != 1:
                raise ValueError(f"{where(k)}: {display}: relation {text!r}: '{el.tensor}' has {n} dimensions; "
                                 "relations are over 1-D index tensors")
            arg = args.get(names_of.get(el.tensor, el.tensor))
            if not isinstance(arg, B.TensorArg):
                applies = False
            elif B.canonical_dtype(arg.dtype) not in _INT_DTYPES:
                raise ValueError(f"{where(k)}: {display}: relation {text!r}: '{el.tensor}' holds {arg.dtype}; "
                                 "relations are over integer index tensors (give its dtype)")
        for n in sorted(B.names(e)):
            if n in env:
                used.add(n)
            elif n not in user_names:
                raise ValueError(f"{where(k)}: {display}: relation {text!r}: '{n}' is not a user dim, a derived dim "
                                 f"or a field of model '{model}'")
        if applies:
            out.append(B.rename_tensors(B.substitute(e, env), names_of))
    return tuple(out)
