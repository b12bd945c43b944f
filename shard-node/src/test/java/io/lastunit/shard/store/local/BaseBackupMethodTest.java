package io.lastunit.shard.store.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The system property that forces a base backup method when the code asks for AUTO. */
class BaseBackupMethodTest {
    @AfterEach
    void clear() {
        System.clearProperty(BaseBackupMethod.PROPERTY);
    }

    @Test
    void fromProperty_unsetOrAuto_leavesTheChoiceToWhatIsInstalled() {
        assertThat(BaseBackupMethod.fromProperty()).isEqualTo(BaseBackupMethod.AUTO);
        System.setProperty(BaseBackupMethod.PROPERTY, " Auto ");
        assertThat(BaseBackupMethod.fromProperty()).isEqualTo(BaseBackupMethod.AUTO);
    }

    @Test
    void fromProperty_sql_forcesTheFallback_andPgBasebackupRequiresTheTool() {
        System.setProperty(BaseBackupMethod.PROPERTY, "sql");
        assertThat(BaseBackupMethod.fromProperty()).isEqualTo(BaseBackupMethod.SQL_API);
        System.setProperty(BaseBackupMethod.PROPERTY, "pg_basebackup");
        assertThat(BaseBackupMethod.fromProperty()).isEqualTo(BaseBackupMethod.PG_BASEBACKUP);
    }

    @Test
    void fromProperty_anythingElse_isRefusedNamingTheProperty() {
        System.setProperty(BaseBackupMethod.PROPERTY, "rsync");
        assertThatThrownBy(BaseBackupMethod::fromProperty).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(BaseBackupMethod.PROPERTY).hasMessageContaining("rsync");
    }
}
