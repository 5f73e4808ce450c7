from ebm.mesh import mesh


def test_descriptor_lookup_by_ui_name_and_entry_term() -> None:
    m = mesh()
    assert m.get("D003937").name == "Diagnosis, Differential"
    assert m.by_name("diagnosis, differential").ui == "D003937"
    assert m.resolve("heart attack").name == "Myocardial Infarction"
    assert m.resolve("not a mesh term at all") is None


def test_top_level_descriptors_recovered_from_children() -> None:
    # Neoplasms has no row of its own in the shared trees table.
    assert mesh().by_name("Neoplasms").tree_numbers == ("C04",)


def test_explode_includes_children_only() -> None:
    m = mesh()
    fever = m.by_name("Fever").ui
    exploded = m.explode(fever)
    assert fever in exploded
    assert m.by_name("Fever of Unknown Origin").ui in exploded
    assert m.by_name("Hypothermia").ui not in exploded


def test_suggest_close_names() -> None:
    assert mesh().suggest("Diagnosis, Diferential")[0] == "Diagnosis, Differential"
