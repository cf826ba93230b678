# SPDX-License-Identifier: Apache-2.0
"""sqlite3 in memory and on disk in /tmp, with the rollback journal and WAL.

WAL mode maps the -shm file and takes fcntl locks, which the default
journal mode does not.
"""
import os
import sqlite3
import tempfile


def exercise(conn):
    conn.execute("create table t (id integer primary key, name text, v real)")
    conn.executemany("insert into t (name, v) values (?, ?)", [("n%d" % i, i / 3) for i in range(500)])
    conn.commit()
    (count,) = conn.execute("select count(*) from t where v > 10").fetchone()
    assert count == 469, count
    conn.execute("create index t_v on t (v)")
    rows = conn.execute("select name from t order by v desc limit 3").fetchall()
    assert rows[0] == ("n499",)


mem = sqlite3.connect(":memory:")
exercise(mem)
mem.close()

with tempfile.TemporaryDirectory() as d:
    disk = sqlite3.connect(os.path.join(d, "db.sqlite"))
    exercise(disk)
    disk.close()
    wal = sqlite3.connect(os.path.join(d, "wal.sqlite"))
    assert wal.execute("pragma journal_mode=wal").fetchone() == ("wal",)
    exercise(wal)
    wal.close()
    again = sqlite3.connect(os.path.join(d, "db.sqlite"))
    assert again.execute("select count(*) from t").fetchone() == (500,)
    again.close()

print("ok sqlite_db")
