# ruff: noqa: RUF001, SIM905 - name lists in many scripts, kept readable as text
"""Real-looking person names and their e5 embeddings, cached outside the repo.

`person_names(count)` builds `count` distinct "Given Surname" strings,
deterministically, from given names and surnames of many languages (Latin
script with and without diacritics, plus Greek, Cyrillic, Arabic, Hebrew,
Devanagari, CJK and Hangul names), so e5 places them as it places real names:
with neighbour structure (shared given names, shared surnames, transliterated
pairs), which random vectors do not have.

`embedded(count)` returns those names and their vectors from the shipped
multilingual-e5-small (`E5EmbeddingProvider`, the `local` extra), embedding
only what is not already cached under `~/.cache/redstring-bench/`. At about
170 names/s alone (slower on a busy machine) the first 60,000 take several
minutes; run `uv run --all-extras python bench/real_names.py --count 60000`
once in the background before `bench/ann.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
import unicodedata
from pathlib import Path

import numpy as np

CACHE = Path.home() / ".cache" / "redstring-bench"

GIVEN = """
James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard
Susan Joseph Jessica Thomas Sarah Charles Karen Christopher Nancy Daniel Lisa Matthew Betty
Anthony Margaret Mark Sandra Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua
Michelle Kenneth Dorothy Kevin Carol Brian Amanda George Melissa Timothy Deborah Ronald
Stephanie Edward Rebecca Jason Sharon Jeffrey Laura Ryan Cynthia Jacob Kathleen Gary Amy
Nicholas Angela Eric Shirley Jonathan Anna Stephen Brenda Larry Pamela Justin Emma Scott
Nicole Brandon Helen Benjamin Samantha Samuel Katherine Gregory Christine Alexander Debra
Frank Rachel Patrick Carolyn Raymond Janet Jack Catherine Dennis Maria Jerry Heather Tyler
Diane Aaron Ruth Jose Julie Adam Olivia Nathan Joyce Henry Virginia Douglas Victoria Zachary
Kelly Peter Lauren Kyle Christina Ethan Joan Walter Evelyn Noah Judith Jeremy Megan Christian
Andrea Keith Cheryl Roger Hannah Terry Jacqueline Gerald Martha Harold Gloria Sean Teresa
Austin Ann Carl Sara Arthur Madison Lawrence Frances Dylan Kathryn Jesse Janice Jordan Jean
Bryan Abigail Billy Alice Joe Judy Bruce Sophia Gabriel Grace Logan Denise Albert Amber Willie
Doris Alan Marilyn Juan Danielle Wayne Beverly Elijah Isabella Randy Theresa Roy Diana Vincent
Natalie Ralph Brittany Eugene Charlotte Russell Marie Bobby Kayla Mason Alexis Philip Lori
José María Jürgen Françoise Søren Zoë Renée Andrés Sébastien Göran Björn Ágnes Łukasz Zoltán
Mehmet Ayşe Giuseppe Giovanni Francesca Alessandro Chiara Matteo Lorenzo Giulia Luca Sofia
Pierre Jean-Luc Camille Étienne Hélène Mathieu Amélie Théo Léa Clément Chloé Antoine Margaux
Hans Klaus Wolfgang Ursula Helmut Ingrid Dieter Sabine Stefan Katrin Jörg Anke Uwe Birgit
Piotr Katarzyna Tomasz Agnieszka Krzysztof Małgorzata Paweł Magdalena Marek Joanna Jakub
Ivan Olga Dmitri Natasha Sergei Irina Alexei Svetlana Nikolai Tatiana Vladimir Yulia Mikhail
Ahmed Fatima Mohammed Aisha Omar Layla Yusuf Zainab Hassan Mariam Ali Noor Khalid Amira
Hiroshi Yuki Takeshi Aiko Kenji Sakura Haruto Yui Sota Hina Ren Mio Daiki Akane Kaito
Wei Fang Jun Li Ming Xiu Hao Yan Lei Jing Tao Mei Chen Lin Qiang Ying Bo Hui Gang Ling
Raj Priya Arjun Ananya Vikram Deepa Rohan Kavya Sanjay Lakshmi Amit Pooja Rahul Meera Anil
Kwame Ama Kofi Abena Chinedu Ngozi Oluwaseun Folake Tendai Nomvula Sipho Thandiwe Jabari Zuri
Seo-yeon Min-jun Ji-woo Ha-eun Do-yun Seo-jun Eun-ji Hyun-woo Ji-ho Soo-ah
Santiago Valentina Mateo Camila Sebastián Isabela Diego Lucía Nicolás Martina Alejandro
Ximena Joaquín Renata Emiliano Paula Tomás Daniela Gabriela Rafael Beatriz Thiago Larissa
Άννα Γιώργος Μαρία Νίκος Ελένη Δημήτρης Σοφία Κώστας Иван Ольга Дмитрий Наталья Сергей
Анна Михаил Елена Алексей Мария محمد فاطمة أحمد عائشة علي مريم יוסף שרה דוד רחל
राज प्रिया अर्जुन अनन्या 伟 芳 娜 敏 静 秀英 健 明 翔 大翔 陽菜 結衣 민준 서연 지우 하은
""".split()

SURNAMES = """
Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez
Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris
Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill
Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips
Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers
Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson
Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo
Sanders Patel Myers Long Ross Foster Jimenez Powell Jenkins Perry Russell Sullivan Bell
Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons Romero Jordan Patterson
Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera Gibson
Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald
Woods Washington Kennedy Wells Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford
Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder Mason Dixon Muñoz Hunt Hicks
Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren Mills Meyer Rice
Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Grant Dunn
Müller Schneider Fischer Weber Schäfer Becker Hoffmann Schulz Koch Bauer Richter Klein Wolf
Schröder Neumann Schwarz Zimmermann Braun Krüger Hofmann Hartmann Lange Schmitt Werner
Dubois Durand Lefebvre Moreau Laurent Simon Michel Leroy Roux David Bertrand Morel Fournier
Girard Bonnet Dupont Lambert Fontaine Rousseau Vincent Muller Lefèvre Mercier Blanc Guérin
Rossi Russo Ferrari Esposito Bianchi Romano Colombo Ricci Marino Greco Bruno Gallo Conti
De Luca Mancini Costa Giordano Rizzo Lombardi Moretti Barbieri Fontana Santoro Mariani
Nowak Kowalski Wiśniewski Wójcik Kowalczyk Kamiński Lewandowski Zieliński Szymański Woźniak
Ivanov Smirnov Kuznetsov Popov Vasiliev Petrov Sokolov Mikhailov Novikov Fedorov Morozov
Volkov Alekseev Lebedev Semenov Egorov Pavlov Kozlov Stepanov Nikolaev Orlov Andreev
Yılmaz Kaya Demir Şahin Çelik Yıldız Yıldırım Öztürk Aydın Özdemir Arslan Doğan Kılıç
Sato Suzuki Takahashi Tanaka Watanabe Ito Yamamoto Nakamura Kobayashi Kato Yoshida Yamada
Sasaki Yamaguchi Matsumoto Inoue Kimura Hayashi Shimizu Yamazaki Mori Abe Ikeda Hashimoto
Wang Li Zhang Liu Chen Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo He Gao Lin Luo Zheng
Sharma Singh Kumar Gupta Reddy Iyer Nair Mehta Joshi Desai Chopra Kapoor Malhotra Bose
Okafor Adeyemi Mensah Owusu Banda Mwangi Otieno Nkosi Dlamini Abubakar Okonkwo Boateng
Al-Sayed Haddad Khoury Nasser Rahman Hussein Abdullah Mansour Farouk Saleh Aziz Karimi
Park Choi Jung Kang Cho Yoon Jang Lim Han Oh Seo Shin Kwon Hwang Ahn Song Yoo Hong
Jensen Nielsen Hansen Pedersen Andersen Larsen Sørensen Johansson Karlsson Nilsson Eriksson
Virtanen Korhonen Mäkinen Nieminen Mäkelä Hämäläinen Laine Heikkinen Koskinen Järvinen
Silva Santos Oliveira Souza Rodrigues Ferreira Alves Pereira Lima Gomes Ribeiro Carvalho
Παπαδόπουλος Παπαδάκης Γεωργίου Οικονόμου Иванов Смирнов Кузнецов Попов Соколов Петров
Волков Морозов حداد خوري منصور ناصر כהן לוי מזרחי פרץ शर्मा सिंह कुमार 王 李 张 刘 陈
佐藤 鈴木 高橋 田中 김 이 박 최 정
""".split()


def _script(word: str) -> str:
    """A coarse script label, so a given name is paired only with a surname of its script."""
    name = unicodedata.name(word[0], "")
    if "CJK" in name or "HIRAGANA" in name or "KATAKANA" in name:
        return "CJK"
    return name.split(" ")[0]


def person_names(count: int) -> list[str]:
    """`count` distinct "Given Surname" names, the same list for the same `count`."""
    given, surnames = sorted(set(GIVEN)), sorted(set(SURNAMES))
    everyone = [
        f"{first} {last}" for first in given for last in surnames if _script(first) == _script(last)
    ]
    if count > len(everyone):
        raise ValueError(f"count must be at most {len(everyone):,}, got {count:,}")
    random.Random(2026).shuffle(everyone)
    return everyone[:count]


def _cache_file() -> Path:
    return CACHE / "e5-person-names.npz"


def _load_cache() -> tuple[list[str], np.ndarray]:
    path = _cache_file()
    if not path.exists():
        return [], np.zeros((0, 384), dtype=np.float32)
    with np.load(path, allow_pickle=False) as data:
        return [str(name) for name in data["names"]], data["vectors"].astype(np.float32)


def embedded(count: int, *, progress: bool = False) -> tuple[list[str], np.ndarray]:
    """The first `count` names and their e5 vectors, embedding only what the cache lacks."""
    wanted = person_names(count)
    cached_names, cached_vectors = _load_cache()
    known = dict(zip(cached_names, range(len(cached_names)), strict=True))
    missing = [name for name in wanted if name not in known]
    if missing:
        cached_names, cached_vectors = _embed_into_cache(
            missing, cached_names, cached_vectors, progress=progress
        )
        known = dict(zip(cached_names, range(len(cached_names)), strict=True))
    rows = np.fromiter((known[name] for name in wanted), dtype=np.int64, count=len(wanted))
    return wanted, cached_vectors[rows]


def _embed_into_cache(
    missing: list[str], names: list[str], vectors: np.ndarray, *, progress: bool
) -> tuple[list[str], np.ndarray]:
    from redstring.llm.adapters.e5 import E5EmbeddingProvider

    async def run() -> tuple[list[str], np.ndarray]:
        nonlocal names, vectors
        started = time.perf_counter()
        async with E5EmbeddingProvider() as provider:
            step = 2_048
            for start in range(0, len(missing), step):
                chunk = missing[start : start + step]
                answer = np.asarray(await provider.embed(chunk), dtype=np.float32)
                names = [*names, *chunk]
                vectors = np.concatenate([vectors, answer])
                CACHE.mkdir(parents=True, exist_ok=True)
                partial = _cache_file().with_suffix(".tmp.npz")
                np.savez(partial, names=np.array(names), vectors=vectors)
                partial.replace(_cache_file())
                if progress:
                    done = start + len(chunk)
                    rate = done / (time.perf_counter() - started)
                    print(f"embedded {done:,}/{len(missing):,} ({rate:,.0f} names/s)", flush=True)
        return names, vectors

    return asyncio.run(run())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=60_000)
    arguments = parser.parse_args()
    found_names, found = embedded(arguments.count, progress=True)
    print(f"{len(found_names):,} names, vectors {found.shape}, cached in {_cache_file()}")
