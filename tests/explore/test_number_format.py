"""The chosen fixed-point format: nothing on the sample saturates, shifts are minimal, inputs recorded."""

import numpy as np
import pytest

from fanns.index.ivfpq_format import choose_format
from fanns.numerics import IvfPqFormat
from tests.explore.helpers import small_index


@pytest.fixture(scope="module", params=[False, True], ids=["ivfpq", "opq"])
def data_and_sample(request):
    _, data, base, _ = small_index(request.param)
    return data, base[:400]


def test_format_fits_sample(data_and_sample):
    data, sample = data_and_sample
    fmt = choose_format(data, sample, nprobe=3)
    lim = (1 << (fmt.vec_bits - 1)) - 1
    assert np.abs(np.rint(sample * fmt.scale)).max() <= lim
    assert np.abs(np.rint(data.centroids * fmt.scale)).max() <= lim
    q = fmt.quantize(sample)
    if data.opq_matrix is not None:
        q = fmt.opq_rotate(q, fmt.quantize_opq_matrix(data.opq_matrix))
    c = fmt.quantize(data.centroids)
    exact = ((q[:, None, :] - c[None]) ** 2).sum(-1)
    assert (exact >> fmt.ivf_shift).max() < (1 << fmt.ivf_dist_bits)
    if fmt.ivf_shift:
        assert (exact >> (fmt.ivf_shift - 1)).max() >= (1 << fmt.ivf_dist_bits)  # minimal shift
    src = fmt.source
    assert src["sample_vectors"] == 400 and src["nprobe"] == 3 and src["lut_saturated_fraction"] <= 0.002
    again = IvfPqFormat.from_dict(fmt.to_dict())
    assert again == fmt and again.source == src


def test_narrow_lut_bits_raise_the_shift(data_and_sample):
    data, sample = data_and_sample
    wide = choose_format(data, sample, nprobe=3, lut_bits=20)
    narrow = choose_format(data, sample, nprobe=3, lut_bits=12)
    assert narrow.lut_shift == wide.lut_shift + 8 or wide.lut_shift == 0
