"""CPDAG conversions: v-structures kept, Meek rules applied, DAG extensions consistent."""

import numpy as np
import pytest

from icml24.causal import dag_to_cpdag, from_causallearn, pdag_to_dag
from icml24.causal.graphs import is_dag, skeleton


def test_chain_is_all_undirected_and_collider_is_kept():
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    assert (dag_to_cpdag(chain) == skeleton(chain).astype(int)).all()
    collider = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
    assert (dag_to_cpdag(collider) == collider).all()


def test_meek_rule_one_orients_downstream_of_a_collider():
    dag = np.zeros((4, 4), dtype=int)
    dag[0, 2] = dag[1, 2] = dag[2, 3] = 1  # 0 -> 2 <- 1, 2 -> 3 compelled by R1
    assert (dag_to_cpdag(dag) == dag).all()


def test_pdag_to_dag_is_a_member_of_the_class():
    rng = np.random.default_rng(0)
    for _ in range(20):
        dag = np.triu((rng.random((6, 6)) < 0.5).astype(int), k=1)
        perm = rng.permutation(6)
        dag = dag[np.ix_(perm, perm)]
        cpdag = dag_to_cpdag(dag)
        member = pdag_to_dag(cpdag)
        assert is_dag(member) and (dag_to_cpdag(member) == cpdag).all()


def test_bad_inputs_and_causallearn_encoding():
    with pytest.raises(ValueError, match="DAG"):
        dag_to_cpdag(np.array([[0, 1], [1, 0]]))
    cycle = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match="no consistent DAG"):
        pdag_to_dag(cycle)
    cl = np.array([[0, -1, -1], [1, 0, 0], [-1, 0, 0]])  # 0 -> 1, 0 - 2
    assert from_causallearn(cl).tolist() == [[0, 1, 1], [0, 0, 0], [1, 0, 0]]
