"""Build rules/journals.tsv from the core clinical journal list in ../shared.

Input: ``../shared/data/clinical-queries/core_clinical_journals_lhncbc_ebm.txt`` (123 titles of
the Abridged Index Medicus list, as LHNCBC's EBM pages gave it; older, some titles renamed
since). Output: one row per title with its NLM title abbreviation (MedlineTA) and the paper's
S_journal 0.6 (section 6.2).

The MedlineTA column is written by hand below (NLM catalog abbreviations; not checked online,
which this project cannot do): a citation matches a row on its MedlineTA, its ISO
abbreviation or its journal title (compared case- and punctuation-insensitively, without a
leading "The" or a subtitle), so a wrong abbreviation costs a match only when the title
differs too. Usage: ``python scripts/build_rules_journals.py [SHARED_DATA_DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "clinical-queries/core_clinical_journals_lhncbc_ebm.txt"
S_JOURNAL = 0.6

MEDLINE_TA: dict[str, str] = {
    "Academic medicine : Journal of the Association of American Medical Colleges": "Acad Med",
    "AJR. American Journal of Roentgenology": "AJR Am J Roentgenol",
    "American Family Physician": "Am Fam Physician",
    "American Heart Journal": "Am Heart J",
    "American Journal of Clinical Pathology": "Am J Clin Pathol",
    "American Journal of Obstetrics and Gynecology": "Am J Obstet Gynecol",
    "American Journal of Ophthalmology": "Am J Ophthalmol",
    "American Journal of Pathology": "Am J Pathol",
    "American Journal of Physical Medicine & Rehabilitation / Association of Academic Physiatrists": (
        "Am J Phys Med Rehabil"
    ),
    "American Journal of Public Health": "Am J Public Health",
    "American Journal of Respiratory and Critical Care Medicine": "Am J Respir Crit Care Med",
    "American Journal of Surgery": "Am J Surg",
    "Anaesthesia": "Anaesthesia",
    "Anesthesia and Analgesia": "Anesth Analg",
    "Anesthesiology": "Anesthesiology",
    "Annals of Emergency Medicine": "Ann Emerg Med",
    "Annals of Internal Medicine": "Ann Intern Med",
    "Annals of Surgery": "Ann Surg",
    "Archives of Dermatology": "Arch Dermatol",
    "Archives of Disease in Childhood": "Arch Dis Child",
    "Archives of Disease in Childhood. Fetal and Neonatal Edition": "Arch Dis Child Fetal Neonatal Ed",
    "Archives of Environmental Health": "Arch Environ Health",
    "Archives of General Psychiatry": "Arch Gen Psychiatry",
    "Archives of Internal Medicine": "Arch Intern Med",
    "Archives of Neurology": "Arch Neurol",
    "Archives of Ophthalmology": "Arch Ophthalmol",
    "Archives of Otolaryngology--Head & Neck Surgery": "Arch Otolaryngol Head Neck Surg",
    "Archives of Pathology & Laboratory Medicine": "Arch Pathol Lab Med",
    "Archives of Pediatrics & Adolescent Medicine": "Arch Pediatr Adolesc Med",
    "Archives of Physical Medicine and Rehabilitation": "Arch Phys Med Rehabil",
    "Archives of surgery (Chicago, Ill. : 1960)": "Arch Surg",
    "Arthritis and Rheumatism": "Arthritis Rheum",
    "Blood": "Blood",
    "BMJ": "BMJ",
    "Brain; A Journal of Neurology": "Brain",
    "British Journal of Obstetrics and Gynaecology": "Br J Obstet Gynaecol",
    "British Medical Journal": "Br Med J",
    "CA: A Cancer Journal for Clinicians": "CA Cancer J Clin",
    "Canadian Medical Association journal": "Can Med Assoc J",
    "Cancer": "Cancer",
    "Chest": "Chest",
    "Circulation": "Circulation",
    "Clinical Orthopaedics and Related Research": "Clin Orthop Relat Res",
    "Clinical Pediatrics": "Clin Pediatr (Phila)",
    "Clinical Pharmacology and Therapeutics": "Clin Pharmacol Ther",
    "CMAJ": "CMAJ",
    "Cochrane Database Syst Rev": "Cochrane Database Syst Rev",
    "Critical Care Medicine": "Crit Care Med",
    "Current Problems in Surgery": "Curr Probl Surg",
    "Diabetes": "Diabetes",
    "Digestive Diseases and Sciences": "Dig Dis Sci",
    "Disease-a-month : DM": "Dis Mon",
    "Endocrinology": "Endocrinology",
    "Gastroenterology": "Gastroenterology",
    "Geriatrics": "Geriatrics",
    "Gut": "Gut",
    "Heart": "Heart",
    "Heart & Lung; the Journal of Critical Care": "Heart Lung",
    "Hospital Practice": "Hosp Pract (Off Ed)",
    "Hospitals & Health Networks / AHA": "Hosp Health Netw",
    "JAMA : the journal of the American Medical Association": "JAMA",
    "Journal of Clinical Pathology": "J Clin Pathol",
    "The Journal of Immunology": "J Immunol",
    "Journal of Neurosurgery": "J Neurosurg",
    "Journal of Oral and Maxillofacial Surgery :  Official Journal of the American Association of Oral "
    "and Maxillofacial Surgeons": "J Oral Maxillofac Surg",
    "Journal of the American College of Cardiology": "J Am Coll Cardiol",
    "Journal of the American College of Surgeons": "J Am Coll Surg",
    "Journal of the American Dietetic Association": "J Am Diet Assoc",
    "Journal of Toxicology. Clinical Toxicology": "J Toxicol Clin Toxicol",
    "The Journal of Trauma": "J Trauma",
    "The Journal of Urology": "J Urol",
    "The Journals of Gerontology. Series A, Biological Sciences and Medical Sciences": (
        "J Gerontol A Biol Sci Med Sci"
    ),
    "The JournalS of Gerontology. Series B, Psychological Sciences and Social Sciences": (
        "J Gerontol B Psychol Sci Soc Sci"
    ),
    "Lancet": "Lancet",
    "Mayo Clinic Proceedings": "Mayo Clin Proc",
    "Medical Letter on Drugs and Therapeutics": "Med Lett Drugs Ther",
    "Medicine; Analytical Reviews of General Medicine, Neurology, Psychiatry, Dermatology, and Pediatries": (
        "Medicine (Baltimore)"
    ),
    "Neurology": "Neurology",
    "Nursing Clinics of North America": "Nurs Clin North Am",
    "Nursing Outlook": "Nurs Outlook",
    "Nursing Research": "Nurs Res",
    "Obstetrics and Gynecology": "Obstet Gynecol",
    "Pediatric Clinics of North America": "Pediatr Clin North Am",
    "Pediatrics": "Pediatrics",
    "Physical Therapy": "Phys Ther",
    "Plastic and Reconstructive Surgery": "Plast Reconstr Surg",
    "Postgraduate Medicine": "Postgrad Med",
    "Progress in Cardiovascular Diseases": "Prog Cardiovasc Dis",
    "Public health reports": "Public Health Rep",
    "Radiologic Clinics of North America": "Radiol Clin North Am",
    "Radiology": "Radiology",
    "Southern Medical Journal": "South Med J",
    "Surgery": "Surgery",
    "Surgical Clinics of North America": "Surg Clin North Am",
    "The American Journal of Cardiology": "Am J Cardiol",
    "The American Journal of Clinical Nutrition": "Am J Clin Nutr",
    "The American Journal of Medicine": "Am J Med",
    "The American Journal of Nursing": "Am J Nurs",
    "The American Journal of Psychiatry": "Am J Psychiatry",
    "The American Journal of the Medical Sciences": "Am J Med Sci",
    "The American Journal of Tropical Medicine and Hygiene": "Am J Trop Med Hyg",
    "The Annals of Otology, Rhinology, and Laryngology": "Ann Otol Rhinol Laryngol",
    "The Annals of Thoracic Surgery": "Ann Thorac Surg",
    "The British Journal of Radiology": "Br J Radiol",
    "The British Journal of Surgery": "Br J Surg",
    "The Journal of allergy and clinical immunology": "J Allergy Clin Immunol",
    "The Journal of Bone and Joint Surgery": "J Bone Joint Surg Am",
    "The Journal of Bone and Joint Surgery.  British volume": "J Bone Joint Surg Br",
    "The Journal of Clinical Endocrinology and Metabolism": "J Clin Endocrinol Metab",
    "The Journal of Clinical Investigation": "J Clin Invest",
    "The Journal of Family Practice": "J Fam Pract",
    "The Journal of Infectious Diseases": "J Infect Dis",
    "The Journal of Laboratory and Clinical Medicine": "J Lab Clin Med",
    "The Journal of Laryngology and Otology": "J Laryngol Otol",
    "The Journal of Nervous and Mental Disease": "J Nerv Ment Dis",
    "The Journal of Nursing Administration": "J Nurs Adm",
    "The Journal of Pediatrics": "J Pediatr",
    "The Journal of Thoracic and Cardiovascular Surgery": "J Thorac Cardiovasc Surg",
    "The Medical Clinics of North America": "Med Clin North Am",
    "The New England Journal of Medicine": "N Engl J Med",
    "The Orthopedic Clinics of North America": "Orthop Clin North Am",
    "The Urologic Clinics of North America": "Urol Clin North Am",
    "The Western Journal of Medicine": "West J Med",
}

HEADER = """\
# Core clinical journals: S_journal for citations published in them (section 6.2: "core and
# high-impact journals such as JAMA get a score of 0.6").
# Built by scripts/build_rules_journals.py from ../shared/data/{source}
# (Abridged Index Medicus, as LHNCBC's EBM pages listed it; older, some titles renamed since).
# Columns (tab-separated): TITLE  MEDLINE_TA  S_JOURNAL  [# comment]
#   TITLE       the journal title as listed
#   MEDLINE_TA  NLM's title abbreviation (written by hand in the build script; empty: match on
#               the title only)
#   S_JOURNAL   the score
# A citation matches on its MedlineTA, ISO abbreviation or title, compared without case,
# punctuation, a leading "The" or a subtitle (after ":" ";" "/" or "("). Add rows freely.
"""


def build(shared: Path) -> str:
    titles = [t.strip() for t in (shared / SOURCE).read_text(encoding="utf-8").splitlines() if t.strip()]
    missing = [t for t in titles if t not in MEDLINE_TA]
    if missing:
        raise SystemExit(f"no MedlineTA written for: {missing}")
    lines = [HEADER.format(source=SOURCE)]
    for t in titles:
        lines.append(f"{' '.join(t.split())}\t{MEDLINE_TA[t]}\t{S_JOURNAL:g}\n")
    return "".join(lines)


def main(argv: list[str]) -> int:
    shared = Path(argv[1]) if len(argv) > 1 else ROOT.parent / "shared" / "data"
    out = ROOT / "rules" / "journals.tsv"
    out.write_text(build(shared), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
