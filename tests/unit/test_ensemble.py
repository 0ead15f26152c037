"""The library-neutral representation, on hand-built trees."""

import numpy as np
import pytest

from skl_treeinner import TreeEnsemble
from skl_treeinner._model._ensemble import node_values_from_leaves
from skl_treeinner._model._objectives import Softmax, SquaredError


def stump_and_depth2():
    # tree 0: node0 split f1 -> leaves 1, 2
    # tree 1: node3 split f0 -> node4 (split f2 -> leaves 6, 7), leaf 5
    left = np.array([1, -1, -1, 4, 6, -1, -1, -1])
    right = np.array([2, -1, -1, 5, 7, -1, -1, -1])
    feature = np.array([1, -1, -1, 0, 2, -1, -1, -1])
    cover = np.array([10.0, 4.0, 6.0, 10.0, 7.0, 3.0, 2.0, 5.0])
    leaf = np.array([0, 0.5, -0.2, 0, 0, 0.3, 1.0, -1.0])
    return left, right, feature, cover, leaf


def make(**kw):
    left, right, feature, cover, leaf = stump_and_depth2()
    value = node_values_from_leaves(left, right, leaf, cover, 1.0)
    args = dict(
        tree_offsets=np.array([0, 3, 8]),
        children_left=left,
        children_right=right,
        feature=feature,
        value=value,
        cover=cover,
        tree_group=np.array([0, 0]),
        iteration_indptr=np.array([0, 1, 2]),
        learning_rate=0.5,
        reg_lambda=1.0,
        intercept=np.array([0.25]),
        objective=SquaredError(),
        n_features=3,
    )
    args.update(kw)
    return TreeEnsemble(**args)


def test_recurrence_by_hand():
    left, right, feature, cover, leaf = stump_and_depth2()
    v = node_values_from_leaves(left, right, leaf, cover, 1.0)
    assert v[0] == pytest.approx((5 * 0.5 + 7 * -0.2) / 11)
    assert v[4] == pytest.approx((3 * 1.0 + 6 * -1.0) / 8)
    assert v[3] == pytest.approx((8 * v[4] + 4 * 0.3) / 11)
    # Leaves are left as they are.
    np.testing.assert_array_equal(v[left < 0], leaf[left < 0])


def test_path_table_by_hand():
    ens = make()
    v = ens.value
    table = ens.path_table.toarray()
    assert table.shape == (8, 3)
    np.testing.assert_allclose(table[1], [0, v[1] - v[0], 0])
    np.testing.assert_allclose(table[6], [v[4] - v[3], 0, v[6] - v[4]])
    np.testing.assert_allclose(table[5], [v[5] - v[3], 0, 0])
    assert not table[[0, 3, 4]].any()  # inner nodes have no row
    # Local accuracy per leaf: path sum + root value = leaf value.
    for t in (1, 2, 5, 6, 7):
        root = 0 if t < 3 else 3
        assert table[t].sum() + v[root] == pytest.approx(v[t])


def test_bias_and_staged_gradients_by_hand():
    ens = make()
    assert ens.bias[0] == pytest.approx(0.25 + ens.value[0] + ens.value[3])
    leaves = np.array([[1, 6], [2, 5]])
    y = np.array([1.0, -1.0])
    g = ens.staged_gradients(leaves, y)
    # tree 0 sees the intercept; tree 1 sees intercept + tree 0's leaf
    np.testing.assert_allclose(g[:, 0], 0.25 - y)
    np.testing.assert_allclose(g[:, 1], 0.25 + ens.value[[1, 2]] - y)


def test_staged_gradients_multiclass_round_order():
    # Two iterations of two classes stored class-major inside each round
    # with two parallel trees: exercises the reduceat path.
    left = np.full(8, -1)
    right = np.full(8, -1)
    ens = TreeEnsemble(
        tree_offsets=np.arange(9),
        children_left=left,
        children_right=right,
        feature=np.full(8, -1),
        value=np.arange(1.0, 9.0) / 10,
        cover=np.ones(8),
        tree_group=np.array([1, 1, 0, 0, 0, 0, 1, 1]),
        iteration_indptr=np.array([0, 4, 8]),
        learning_rate=1.0,
        reg_lambda=0.0,
        intercept=np.array([0.0, 0.5]),
        objective=Softmax(2),
        n_features=1,
    )
    leaves = np.arange(8)[None, :]
    g = ens.staged_gradients(leaves, np.array([1]))
    # round 0 margins = intercept; round 1 adds round 0's trees per class
    m0 = np.array([0.0, 0.5])
    m1 = m0 + np.array([0.3 + 0.4, 0.1 + 0.2])
    p0 = np.exp(m0) / np.exp(m0).sum()
    p1 = np.exp(m1) / np.exp(m1).sum()
    expected = [p0[1] - 1, p0[1] - 1, p0[0], p0[0], p1[0], p1[0], p1[1] - 1, p1[1] - 1]
    np.testing.assert_allclose(g[0], expected)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"tree_offsets": np.array([0, 3, 7])}, "tree_offsets"),
        ({"tree_group": np.array([0])}, "tree_group"),
        ({"tree_group": np.array([0, 1])}, "outputs"),
        ({"iteration_indptr": np.array([0, 2, 2])}, "iteration_indptr"),
        ({"intercept": np.array([0.0, 1.0])}, "intercept"),
        ({"feature": np.array([1, -1, -1, 0, 3, -1, -1, -1])}, "valid feature"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"cover": np.ones(3)}, "cover"),
    ],
)
def test_validation(change, match):
    with pytest.raises(ValueError, match=match):
        make(**change)
