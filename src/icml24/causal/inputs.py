"""Mixed continuous / discrete data for the kernel scores: one float matrix and a mask of its discrete columns.

The paper's discrete and mixed experiments feed bin indices to the same kernels (official ``Data/utils.py``); what
changes is the child width's initialisation. A user says which columns are discrete with ``discrete`` (a boolean
mask, or column indices, or column names of a DataFrame), or passes a pandas DataFrame whose categorical (or
boolean) columns are taken as discrete, coded by their category codes. Strings, complex numbers and missing
values are refused with a message naming the column.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _name(columns, j: int) -> str:
    return repr(columns[j]) if columns is not None else f"{j}"


def _column_values(series, name: str) -> tuple[np.ndarray, bool]:
    """(float values, is discrete) of one DataFrame column."""
    from pandas.api import types

    if isinstance(series.dtype, types.CategoricalDtype):
        codes = np.asarray(series.cat.codes, dtype=float)
        if (codes < 0).any():
            raise ValueError(f"column {name} has missing values; drop or impute them before passing the data in")
        return codes, True
    if types.is_complex_dtype(series.dtype):
        raise ValueError(f"column {name} is complex; the kernel scores take real numbers")
    if types.is_bool_dtype(series.dtype) or types.is_numeric_dtype(series.dtype):
        if series.isna().any():
            raise ValueError(f"column {name} has missing values; drop or impute them before passing the data in")
        return series.to_numpy(dtype=float), types.is_bool_dtype(series.dtype)
    raise ValueError(f"column {name} holds {series.dtype} values (strings or objects); convert it to numbers or to a "
                     "pandas Categorical (its codes are used and the column is taken as discrete)")


def _from_frame(frame) -> tuple[np.ndarray, np.ndarray, list]:
    columns = list(frame.columns)
    values, mask = [], []
    for j in range(len(columns)):
        v, is_discrete = _column_values(frame.iloc[:, j], _name(columns, j))
        values.append(v)
        mask.append(is_discrete)
    return np.column_stack(values) if values else np.zeros((len(frame), 0)), np.array(mask, dtype=bool), columns


def _from_array(data: Any) -> np.ndarray:
    array = np.asarray(data)
    if array.dtype.kind == "c":
        raise ValueError("data is complex; the kernel scores take real numbers")
    if array.dtype.kind not in "biuf":
        flat = array.reshape(len(array), -1) if array.ndim >= 1 and len(array) else array.reshape(-1, 1)
        for j in range(flat.shape[1] if flat.ndim == 2 else 0):
            try:
                np.asarray(flat[:, j], dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"data column {j} holds non-numeric values ({flat[0, j]!r}, ...); convert it to "
                                 "numbers, or pass a pandas DataFrame with that column as a Categorical") from None
        array = np.asarray(array, dtype=float)
    return np.asarray(array, dtype=float)


def _discrete_mask(discrete, num_columns: int, columns: list | None) -> np.ndarray:
    mask = np.zeros(num_columns, dtype=bool)
    if discrete is None:
        return mask
    items = np.asarray(discrete)
    if items.dtype.kind == "b":
        if items.shape != (num_columns,):
            raise ValueError(f"a boolean discrete mask needs one entry per data column ({num_columns}), "
                             f"got shape {items.shape}")
        return items.copy()
    for item in np.atleast_1d(items).tolist():
        if columns is not None and item in columns:
            mask[columns.index(item)] = True
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool) and 0 <= item < num_columns:
            mask[int(item)] = True
        else:
            raise ValueError(f"discrete entry {item!r} is neither a column index in [0, {num_columns}) nor a column "
                             "name; pass a boolean mask, column indices, or DataFrame column names")
    return mask


def as_mixed(data: Any, discrete=None) -> tuple[np.ndarray, np.ndarray]:
    """(n x columns float64 matrix, boolean mask of its discrete columns) from an array or a pandas DataFrame.

    ``discrete`` (optional) marks further discrete columns: a boolean mask, column indices or DataFrame names.
    """
    columns = None
    if hasattr(data, "dtypes") and hasattr(data, "columns"):  # a pandas DataFrame (not imported here)
        matrix, mask, columns = _from_frame(data)
    else:
        matrix = _from_array(data)
        mask = np.zeros(matrix.shape[1] if matrix.ndim == 2 else 0, dtype=bool)
    if matrix.ndim != 2:
        raise ValueError(f"data must be 2-d (samples x columns), got shape {matrix.shape}")
    return matrix, mask | _discrete_mask(discrete, matrix.shape[1], columns)
