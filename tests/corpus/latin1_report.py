#!/usr/bin/env python3
# -*- coding: latin-1 -*-
"""Rapport mensuel des ventes (exporté pour l'ancien tableur de la comptabilité)."""

import sys
from collections import defaultdict
from decimal import Decimal

EN_TÊTE = ("Mois", "Région", "Chiffre d'affaires (EUR)", "Écart")
RÉGIONS = {"IDF": "Île-de-France", "ARA": "Auvergne-Rhône-Alpes", "PAC": "Provence-Alpes-Côte d'Azur"}
SÉPARATEUR = ";"  # le tableur attend des points-virgules (et pas de « , »)


def lire_ventes(lignes):
    """Agrège les montants par (mois, région) ; ignore les lignes mal formées."""
    totaux = defaultdict(Decimal)
    for numéro, ligne in enumerate(lignes, 1):
        champs = ligne.rstrip("\n").split(SÉPARATEUR)
        if len(champs) != 3:
            print(f"ligne {numéro} ignorée : {ligne!r}", file=sys.stderr)
            continue
        mois, région, montant = champs
        totaux[(mois, région)] += Decimal(montant.replace(",", "."))
    return totaux


def écart(courant, précédent):
    """Variation en % (« n/d » quand le mois précédent est nul)."""
    if not précédent:
        return "n/d"
    return f"{(courant - précédent) / précédent * 100:+.1f} %"


class Rapport:
    """Le tableau final, trié par mois puis par région."""

    def __init__(self, totaux):
        self.totaux = dict(sorted(totaux.items()))

    def lignes(self):
        précédents = {}
        for (mois, région), montant in self.totaux.items():
            nom = RÉGIONS.get(région, région)
            yield (mois, nom, f"{montant:.2f}".replace(".", ","), écart(montant, précédents.get(région)))
            précédents[région] = montant

    def écrire(self, sortie):
        sortie.write(SÉPARATEUR.join(EN_TÊTE) + "\n")
        for ligne in self.lignes():
            sortie.write(SÉPARATEUR.join(ligne) + "\n")


def main(argv):
    if len(argv) != 2:
        print("usage : latin1_report.py VENTES.csv", file=sys.stderr)
        return 2
    with open(argv[1], encoding="latin-1") as entrée:
        rapport = Rapport(lire_ventes(entrée))
    rapport.écrire(sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
